/**
 * Who sees what in the console: an invite link opened in a browser (JSON clients keep the JSON
 * answer) accepted into an AGENT's console, without approvals or supervisor; an invite accepted by
 * someone who already has an account (with its password, on a phone, by keyboard); a VIEWER's
 * console without a single action; a removed member signed out by the next event; keyboard-only
 * sign-in with a visible focus; and every screen within a phone's width, every field labelled, its
 * main controls reached by Tab with a visible focus.
 */
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import {
  assertFitsWidth,
  consoleSuite,
  liveFeeds,
  PHONE,
  screenshot,
  signIn,
  tabTo,
  unlabelledControls,
} from "./_helpers/browser.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";

Deno.test("roles decide what the console offers; invites, removals, keyboard and phone", async (t) => {
  const suite = await consoleSuite();
  try {
    const { workspaceId, owner } = await suite.t.seed.workspace("Acme");
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const channel = await seedChannel(suite.t.app, workspaceId, agent.id);
    const first = await customerMessage(suite.t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content: "Hello?",
    });
    const conversationPath = `/#/conversation/${first.conversationId}`;

    await t.step("an invite link opened in a browser is accepted into an AGENT's console", async () => {
      const invite = await owner.client.post(`/api/workspaces/${workspaceId}/invites`, {
        email: "agent@example.test",
        role: "AGENT",
      });
      assert.equal(invite.status, 201, JSON.stringify(invite.body));
      const path = new URL(invite.body.inviteUrl).pathname;
      // A JSON client keeps the API's answer at the same path.
      const json = await fetch(`${suite.baseUrl}${path}`, { headers: { accept: "application/json" } });
      assert.match(json.headers.get("content-type")!, /json/);
      assert.equal((await json.json()).role, "AGENT");

      const { page, refused, incidents, close } = await suite.open(path);
      await page.getByText("You are invited to").waitFor();
      assert.deepEqual(await unlabelledControls(page), []);
      await page.getByLabel("Name").fill("Alex");
      await page.getByLabel("Password").fill("a long enough password");
      await screenshot(page, "invite");
      await page.getByRole("button", { name: "Accept invitation" }).click();
      await page.getByRole("button", { name: "Log out" }).waitFor();
      assert.equal(new URL(page.url()).pathname, "/");
      await page.getByText("AGENT", { exact: true }).waitFor();
      await expectNav(page, ["Conversations", "Agents"]);

      // An AGENT attends conversations (a hash change: the same page, still signed in)...
      await page.goto(conversationPath);
      await page.getByRole("button", { name: "Take over" }).waitFor();
      // ...but neither approvals nor the supervisor, nor agents' settings.
      await page.goto("/#/approvals");
      await page.getByText("Your role in this workspace does not include this screen.").waitFor();
      await page.goto(`/#/agents/${agent.id}`);
      await page.getByLabel("Name", { exact: true }).waitFor();
      assert.equal(await page.getByLabel("Name", { exact: true }).isDisabled(), true);
      assert.deepEqual(await buttons(page), ["Log out"]);
      assert.deepEqual(refused, []);
      assert.deepEqual(incidents, []);
      await close();
    });

    await t.step(
      "someone with an account accepts an invite with its password, on a phone, by keyboard",
      async () => {
        const elsewhere = await suite.t.seed.workspace("Elsewhere");
        const existing = elsewhere.owner;
        const invite = await owner.client.post(`/api/workspaces/${workspaceId}/invites`, {
          email: existing.email,
          role: "MANAGER",
        });
        assert.equal(invite.status, 201, JSON.stringify(invite.body));
        const memberIds = async () =>
          (await owner.client.get(`/api/workspaces/${workspaceId}/members`)).body.data.map(
            (m: { id: string; role: string }) => `${m.id} ${m.role}`,
          );
        const before = await memberIds();

        const { page, refused, incidents, close } = await suite.open(
          new URL(invite.body.inviteUrl).pathname,
          PHONE,
        );
        await page.getByText("You have an account: confirm with its password.").waitFor();
        await page.getByText(existing.email, { exact: true }).waitFor();
        // No name to give: the account exists.
        assert.equal(await page.getByLabel("Name").count(), 0);
        assert.deepEqual(await unlabelledControls(page), []);
        await assertFitsWidth(page, "the invitation");
        const password = page.getByLabel("Password");
        await tabTo(page, password);
        await page.keyboard.type("not the password");
        await page.keyboard.press("Enter");
        await page.getByRole("alert").filter({
          hasText: "Wrong password for the existing account of this email.",
        }).waitFor();
        assert.deepEqual(await memberIds(), before);

        await tabTo(page, password);
        await page.keyboard.press("Control+A");
        await page.keyboard.type(existing.password);
        await tabTo(page, page.getByRole("button", { name: "Accept invitation" }));
        await page.keyboard.press("Enter");
        await page.getByRole("button", { name: "Log out" }).waitFor();
        assert.equal(new URL(page.url()).pathname, "/");
        // Signed in to the workspace that invited them, as a MANAGER, beside their own workspace.
        await page.getByText("MANAGER", { exact: true }).waitFor();
        assert.equal(await page.getByLabel("Workspace").inputValue(), workspaceId);
        await expectNav(page, ["Conversations", "Approvals", "Supervisor", "Agents"]);
        assert.deepEqual((await memberIds()).sort(), [...before, `${existing.userId} MANAGER`].sort());
        const own = await existing.client.get(`/api/workspaces/${elsewhere.workspaceId}/members`);
        assert.deepEqual(own.body.data.map((m: { id: string; role: string }) => [m.id, m.role]), [
          [existing.userId, "OWNER"],
        ]);
        // The invite is used up.
        const again = await fetch(`${suite.baseUrl}${new URL(invite.body.inviteUrl).pathname}`, {
          headers: { accept: "application/json" },
        });
        assert.equal(again.status, 409);
        await again.body?.cancel();
        assert.deepEqual(refused, []);
        assert.deepEqual(incidents, []);
        await close();
      },
    );

    const viewer = await suite.t.seed.member(workspaceId, "VIEWER");
    await t.step("a VIEWER sees conversations and agents without any action", async () => {
      await owner.client.post(`/api/conversations/${first.conversationId}/takeover`);
      const { page, close } = await suite.open(conversationPath);
      await signIn(page, viewer);
      await page.getByRole("list", { name: "Messages" }).getByText("Hello?").waitFor();
      await page.getByRole("heading", { name: /HUMAN/ }).waitFor();
      assert.deepEqual(await buttons(page), ["Log out"]);
      assert.equal(await page.getByLabel("Reply").count(), 0);
      await expectNav(page, ["Conversations", "Agents"]);
      await page.goto(`/#/agents/${agent.id}`);
      await page.getByLabel("Name", { exact: true }).waitFor();
      assert.deepEqual(await buttons(page), ["Log out"]);
      await close();
    });

    await t.step("a removed member is signed out by the next event", async () => {
      // The earlier pages' feeds are gone, so the count below is this page's.
      await liveFeeds(suite.t.app, 0);
      const { page, close } = await suite.open(conversationPath);
      await signIn(page, viewer);
      await page.getByRole("list", { name: "Messages" }).getByText("Hello?").waitFor();
      await liveFeeds(suite.t.app, 2);
      const removed = await owner.client.delete(`/api/workspaces/${workspaceId}/members/${viewer.userId}`);
      assert.equal(removed.status, 204);
      await customerMessage(suite.t.app, {
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        content: "Anyone there?",
      });
      await page.getByRole("button", { name: "Log in" }).waitFor();
      await page.getByText(/no longer a member|session has ended/).waitFor();
      await close();
    });

    await t.step("the keyboard alone signs in, with a visible focus", async () => {
      const { page, close } = await suite.open("/");
      // The form shows once the page has looked for a session kept in its cookie (none here).
      await page.getByLabel("Email").waitFor();
      await page.keyboard.press("Tab");
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("name")), "email");
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      assert.notEqual(outline, "none");
      await page.keyboard.type(owner.email);
      await page.keyboard.press("Tab");
      await page.keyboard.type(owner.password);
      await page.keyboard.press("Enter");
      await page.getByRole("button", { name: "Log out" }).waitFor();
      await close();
    });

    await t.step(
      "every screen fits a phone's width, labels every field, and Tab reaches its controls with a visible focus",
      async () => {
        // Something on every screen: a pending approval (the conversation is HUMAN since the VIEWER's step).
        await newApproval(await actorOf(suite.t.app, owner.token, workspaceId), agent.id);
        const { page, close } = await suite.open("/", PHONE);
        const button = (name: string) => page.getByRole("button", { name, exact: true });
        /** The screen at `path` on a phone: its width, its labels, then Tab to each of `controls`. */
        const check = async (path: string, controls: Array<Locator | string>) => {
          await assertFitsWidth(page, path);
          assert.deepEqual(await unlabelledControls(page), [], `${path}: every field has a label`);
          for (const c of controls) {
            if (typeof c === "string") await page.keyboard.type(c);
            else await tabTo(page, c);
          }
        };
        await page.getByRole("button", { name: "Log in" }).waitFor();
        await check("sign-in", [page.getByLabel("Email"), page.getByLabel("Password"), button("Log in")]);
        await signIn(page, owner);
        const screens: Array<[string, Locator, Array<Locator | string>]> = [
          ["/#/conversations", page.getByRole("link", { name: /Maria Silva/ }), [
            page.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "Approvals" }),
            button("Log out"),
            page.getByLabel("Agent"),
            page.getByLabel("Status"),
            page.getByRole("link", { name: /Maria Silva/ }),
          ]],
          [conversationPath, button("Release"), [
            button("Release"),
            button("Close"),
            page.getByLabel("Reply"),
            "On my way.",
            button("Send"),
          ]],
          ["/#/approvals", button("Approve"), [button("Approve"), button("Reject")]],
          ["/#/supervisor", page.getByLabel("Message"), [
            page.getByLabel("Message"),
            "Hello?",
            button("Send"),
          ]],
          ["/#/agents", page.getByRole("link", { name: /Ana/ }), [page.getByRole("link", { name: /Ana/ })]],
          [`/#/agents/${agent.id}`, button("Save settings"), [
            page.getByLabel("Name", { exact: true }),
            page.getByLabel("Sees images (vision)"),
            button("Save settings"),
            button("Pause"),
            button("Edit prompt"),
          ]],
        ];
        for (const [path, ready, controls] of screens) {
          await page.goto(path);
          await ready.waitFor();
          await check(path, controls);
          if (path === "/#/conversations") await screenshot(page, "conversations-phone");
        }
        await close();
      },
    );
  } finally {
    await suite.close();
  }
});

/** The visible buttons' names, in page order. */
async function buttons(page: Page): Promise<string[]> {
  return (await page.getByRole("button").allInnerTexts()).map((s) => s.trim());
}

/** The header's screens are exactly `names`. */
async function expectNav(page: Page, names: string[]) {
  const links = await page.getByRole("navigation", { name: "Screens" }).getByRole("link").allInnerTexts();
  assert.deepEqual(links, names);
}
