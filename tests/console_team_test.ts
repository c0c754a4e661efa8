/**
 * Members and API tokens in the console, each effect read back over REST: an invite's link shown
 * once and copied (and working), a role changed, the last OWNER kept (the server's reason on
 * screen), a member removed, an invite withdrawn; a token created (shown once, working), listed by
 * prefix and last use, and revoked (401 afterwards). A MANAGER is offered only what the role table
 * allows; an AGENT and a VIEWER see neither screen. Desk and phone.
 */
import assert from "node:assert/strict";
import { Client } from "./_helpers/app.ts";
import {
  assertFitsWidth,
  consoleSuite,
  PHONE,
  screenshot,
  signIn,
  unlabelledControls,
} from "./_helpers/browser.ts";
import type { Page } from "playwright-core";

Deno.test("members and API tokens are managed from the console, as the role allows", async (t) => {
  const suite = await consoleSuite();
  try {
    const { app, seed, anon } = suite.t;
    const { workspaceId, owner } = await seed.workspace("Acme");
    const manager = await seed.member(workspaceId, "MANAGER");
    const agent = await seed.member(workspaceId, "AGENT");
    const viewer = await seed.member(workspaceId, "VIEWER");
    const ws = `/api/workspaces/${workspaceId}`;
    const roles = async () =>
      Object.fromEntries(
        (await owner.client.get(`${ws}/members`)).body.data.map((m: { id: string; role: string }) => [
          m.id,
          m.role,
        ]),
      );
    const nameOf = async (userId: string) =>
      (await owner.client.get(`${ws}/members`)).body.data.find((m: { id: string }) => m.id === userId).name;
    const { page, context, refused, incidents, close } = await suite.open("/");
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await signIn(page, owner);
    const members = page.getByRole("table", { name: "Members" });
    const row = async (userId: string) =>
      members.getByRole("row", { name: await nameOf(userId), exact: true });

    await t.step("an OWNER invites: the link is shown once, copies, and works", async () => {
      await page.getByRole("link", { name: "Members" }).click();
      await (await row(viewer.userId)).waitFor();
      assert.equal(await members.getByRole("row").count(), 5); // the header and four members
      await page.getByLabel("Email").fill("new.manager@example.test");
      await page.getByLabel("Role", { exact: true }).selectOption("MANAGER");
      await page.getByRole("button", { name: "Invite" }).click();
      const link = page.getByLabel("Invite link", { exact: true });
      await link.waitFor();
      const url = await link.inputValue();
      assert.match(url, /\/invite\/[\w-]+$/);
      await page.getByRole("region", { name: "Invite link (shown once)" }).getByRole("button", {
        name: "Copy",
      }).click();
      await page.getByText("Copied.").waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);
      const invites = (await owner.client.get(`${ws}/invites`)).body.data;
      assert.deepEqual(invites.map((i: { email: string; role: string }) => [i.email, i.role]), [
        ["new.manager@example.test", "MANAGER"],
      ]);
      const opened = await anon.get(new URL(url).pathname);
      assert.equal(opened.status, 200);
      assert.equal(opened.body.email, "new.manager@example.test");
      await page.getByRole("table", { name: "Invites" }).getByRole("row", {
        name: "new.manager@example.test",
      })
        .waitFor();
      assert.deepEqual(await unlabelledControls(page), []);
      await screenshot(page, "members");
    });

    await t.step(
      "a role is changed; the last OWNER stays one and stays, and the screen says why",
      async () => {
        const agentName = await nameOf(agent.userId);
        await page.getByLabel(`Role of ${agentName}`).selectOption("VIEWER");
        await (await row(agent.userId)).getByText("Now VIEWER.").waitFor();
        assert.equal((await roles())[agent.userId], "VIEWER");

        const ownerName = await nameOf(owner.userId);
        await page.getByLabel(`Role of ${ownerName}`).selectOption("MANAGER");
        await (await row(owner.userId)).getByRole("alert").filter({
          hasText: "A workspace needs at least one OWNER: make someone else OWNER first.",
        }).waitFor();
        assert.equal(await page.getByLabel(`Role of ${ownerName}`).inputValue(), "OWNER");
        assert.equal((await roles())[owner.userId], "OWNER");
        // Nor can the last OWNER remove themselves.
        const mine = await row(owner.userId);
        await mine.getByRole("button", { name: "Remove" }).click();
        await mine.getByText("Remove yourself from this workspace? You lose access at once.").waitFor();
        await mine.getByRole("button", { name: "Remove member" }).click();
        // The question goes with the answer; the reason shown is the removal's.
        await mine.getByRole("alertdialog").waitFor({ state: "detached" });
        await mine.getByRole("alert").filter({ hasText: "A workspace needs at least one OWNER" }).waitFor();
        assert.equal((await roles())[owner.userId], "OWNER");
      },
    );

    await t.step("a member is removed after a second question; an invite is withdrawn", async () => {
      const viewerRow = await row(viewer.userId);
      await viewerRow.getByRole("button", { name: "Remove" }).click();
      await viewerRow.getByRole("alertdialog").getByRole("button", { name: "Remove member" }).click();
      await viewerRow.waitFor({ state: "detached" });
      assert.equal((await roles())[viewer.userId], undefined);
      assert.equal((await viewer.client.get("/api/agents")).status, 403);

      const invite = page.getByRole("table", { name: "Invites" }).getByRole("row", {
        name: "new.manager@example.test",
      });
      await invite.getByRole("button", { name: "Withdraw" }).click();
      await invite.waitFor({ state: "detached" });
      assert.deepEqual((await owner.client.get(`${ws}/invites`)).body.data, []);
    });

    await t.step(
      "an API token is created (shown once, working), listed with its last use, revoked",
      async () => {
        await page.getByRole("link", { name: "API tokens" }).click();
        await page.getByText("No API tokens yet.").waitFor();
        await page.getByLabel("Label").fill("CRM sync");
        await page.getByRole("button", { name: "Create token" }).click();
        const shown = page.getByLabel("New token", { exact: true });
        await shown.waitFor();
        const token = await shown.inputValue();
        assert.match(token, /^sbt_/);
        const listed = page.getByRole("table", { name: "API tokens" }).getByRole("row", { name: "CRM sync" });
        await listed.getByText(`${token.slice(0, 10)}…`).waitFor();
        await listed.getByText("never").waitFor();
        assert.deepEqual(await unlabelledControls(page), []);
        await screenshot(page, "tokens");
        // The token works; the list, read again, shows its use.
        const program = new Client(app, token, workspaceId);
        assert.equal((await program.get("/api/agents")).status, 200);
        await page.getByRole("link", { name: "Members" }).click();
        await page.getByRole("link", { name: "API tokens" }).click();
        await listed.getByText("never").waitFor({ state: "detached" });
        const stored = (await owner.client.get(`${ws}/api-tokens`)).body.data;
        assert.equal(stored.length, 1);
        assert.equal(stored[0].prefix, token.slice(0, 10));
        assert.notEqual(stored[0].lastUsedAt, null);
        // Shown once: the value is nowhere on the page any more.
        assert.equal(await page.getByLabel("New token", { exact: true }).count(), 0);
        assert.ok(!(await page.content()).includes(token));

        await listed.getByRole("button", { name: "Revoke" }).click();
        await listed.getByRole("button", { name: "Revoke token" }).click();
        await listed.getByText(/^Revoked/).waitFor();
        assert.equal((await program.get("/api/agents")).status, 401);
        assert.notEqual((await owner.client.get(`${ws}/api-tokens`)).body.data[0].revokedAt, null);
      },
    );

    await t.step(
      "a MANAGER changes and removes only AGENT and VIEWER members, and invites no OWNER",
      async () => {
        const m = await suite.open("/");
        await signIn(m.page, manager);
        await m.page.getByRole("link", { name: "Members" }).click();
        const table = m.page.getByRole("table", { name: "Members" });
        const ownerRow = table.getByRole("row", { name: await nameOf(owner.userId), exact: true });
        await ownerRow.waitFor();
        assert.equal(await ownerRow.getByRole("combobox").count(), 0);
        assert.equal(await ownerRow.getByRole("button").count(), 0);
        const agentName = await nameOf(agent.userId);
        const options = await m.page.getByLabel(`Role of ${agentName}`).locator("option").allInnerTexts();
        assert.deepEqual(options, ["AGENT", "VIEWER"]);
        const inviteRoles = await m.page.getByLabel("Role", { exact: true }).locator("option")
          .allInnerTexts();
        assert.deepEqual(inviteRoles, ["AGENT", "VIEWER"]);
        assert.deepEqual(m.incidents, []);
        await m.close();
      },
    );

    await t.step("an AGENT and a VIEWER see neither screen (not in the header, not by address)", async () => {
      for (const role of ["AGENT", "VIEWER"] as const) {
        const who = await seed.member(workspaceId, role);
        const a = await suite.open("/");
        await signIn(a.page, who);
        const nav = a.page.getByRole("navigation", { name: "Screens" });
        assert.deepEqual(await nav.getByRole("link").allInnerTexts(), ["Conversations", "Agents"]);
        for (const screen of ["members", "tokens"]) {
          await a.page.goto(`/#/${screen}`);
          await a.page.getByText("Your role in this workspace does not include this screen.").waitFor();
        }
        assert.equal(await a.page.getByRole("table").count(), 0);
        await a.close();
      }
    });

    await t.step("on a phone: both screens fit the width", async () => {
      const p = await suite.open("/", PHONE);
      await signIn(p.page, owner);
      await phoneScreen(p.page, "Members", "members-phone");
      await phoneScreen(p.page, "API tokens", "tokens-phone");
      assert.deepEqual(p.incidents, []);
      await p.close();
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
  }
});

/** Opens a screen from the header on a phone, checks it fits and takes its screenshot. */
async function phoneScreen(page: Page, link: string, name: string) {
  await page.getByRole("link", { name: link }).click();
  await page.getByRole("heading", { name: link, level: 1 }).waitFor();
  await page.getByRole("table").first().waitFor();
  await assertFitsWidth(page, link);
  await screenshot(page, name);
}
