/**
 * The console served by the server: `GET /` and its assets from this origin only (nothing the page
 * asks for leaves 127.0.0.1), its own icon, sign-in with "Email", "Password", "Log in", a reload or a
 * new tab still signed in (the session in an httpOnly cookie no script reads), the workspace switch
 * kept across a reload, "Log out", and a session revoked elsewhere signing the page out on its next call.
 */
import assert from "node:assert/strict";
import { consoleSuite, screenshot, signIn } from "./_helpers/browser.ts";

Deno.test("the console signs in, switches workspace, logs out, and is signed out when its session is revoked", async (t) => {
  const suite = await consoleSuite();
  try {
    const { workspaceId, owner } = await suite.t.seed.workspace("Acme");
    await suite.t.seed.agent(owner.client, { name: "Ana" });

    await t.step("GET / serves the page and its assets from the server, under a strict policy", async () => {
      const page = await fetch(`${suite.baseUrl}/`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-type")!, /^text\/html/);
      const policy = page.headers.get("content-security-policy")!;
      assert.match(policy, /script-src 'self'/);
      const html = await page.text();
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(assets.map((a) => a.split("?")[0]).sort(), [
        "/console/app.js",
        "/console/favicon.svg",
        "/console/style.css",
      ]);
      for (const asset of assets) {
        const res = await fetch(`${suite.baseUrl}${asset}`);
        assert.equal(res.status, 200, asset);
        await res.body?.cancel();
      }
      const icon = await fetch(`${suite.baseUrl}/console/favicon.svg`);
      assert.equal(icon.headers.get("content-type"), "image/svg+xml");
      const svg = await icon.text();
      assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      // Nothing outside the origin: the icon links, loads and draws nothing from elsewhere.
      assert.doesNotMatch(svg, /href|url\(|<image|<script/i);
      const unknown = await fetch(`${suite.baseUrl}/console/other.js`);
      assert.equal(unknown.status, 404);
      await unknown.body?.cancel();
    });

    await t.step("the page's icon is the console's own SVG, drawn by Chromium from this origin", async () => {
      const { page, refused, incidents, close } = await suite.open("/");
      await page.getByRole("button", { name: "Log in" }).waitFor();
      const icon = await page.evaluate(async () => {
        const link = document.querySelector<HTMLLinkElement>('link[rel="icon"]')!;
        const img = new Image();
        img.src = link.href;
        await img.decode();
        return { href: link.href, type: link.type, width: img.naturalWidth, height: img.naturalHeight };
      });
      assert.match(icon.href, new RegExp(`^${suite.baseUrl}/console/favicon\\.svg\\?v=[0-9a-f]{24}$`));
      assert.deepEqual({ ...icon, href: "" }, { href: "", type: "image/svg+xml", width: 32, height: 32 });
      assert.deepEqual(refused, []);
      assert.deepEqual(incidents, []);
      await close();
    });

    await t.step("a wrong password is refused on the page; the right one opens the console", async () => {
      const { page, refused, incidents, close } = await suite.open("/");
      await page.getByLabel("Email").fill(owner.email);
      await page.getByLabel("Password").fill("not the password");
      await screenshot(page, "sign-in");
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("alert").waitFor();
      await signIn(page, owner);
      await page.getByRole("heading", { name: "Conversations" }).waitFor();
      // The Acme workspace is shown; a single membership needs no switch.
      await page.getByText("Acme", { exact: true }).waitFor();
      assert.equal(await page.getByLabel("Workspace").count(), 0);
      await page.getByRole("button", { name: "Log out" }).click();
      await page.getByRole("button", { name: "Log in" }).waitFor();
      assert.deepEqual(refused, []);
      assert.deepEqual(incidents, []);
      await close();
    });

    await t.step(
      "a reload and a new tab stay signed in, with no token a script can read; after Log out a reload asks for the password",
      async () => {
        const { page, context, incidents, close } = await suite.open("/");
        await signIn(page, owner);
        await page.getByRole("heading", { name: "Conversations" }).waitFor();
        // The session is a cookie the page's scripts cannot see, and nothing of it is in storage.
        const [cookie, ...others] = await context.cookies();
        assert.deepEqual(others, []);
        assert.equal(cookie.name, "switchboard_session");
        assert.equal(cookie.httpOnly, true);
        assert.equal(cookie.sameSite, "Strict");
        assert.equal(cookie.path, "/");
        assert.equal(await page.evaluate(() => document.cookie), "");
        const stored = await page.evaluate(() => ({ ...localStorage, ...sessionStorage }));
        assert.deepEqual(stored, { "switchboard.workspace": workspaceId });

        await page.reload();
        await page.getByRole("heading", { name: "Conversations" }).waitFor();
        await page.getByText("Acme", { exact: true }).waitFor();
        assert.equal(await page.getByRole("button", { name: "Log in" }).count(), 0);
        const tab = await context.newPage();
        await tab.goto("/");
        await tab.getByRole("button", { name: "Log out" }).waitFor();
        await tab.getByRole("heading", { name: "Conversations" }).waitFor();

        await page.getByRole("button", { name: "Log out" }).click();
        await page.getByRole("button", { name: "Log in" }).waitFor();
        assert.deepEqual(await context.cookies(), []);
        // The session is revoked, not only forgotten by this browser.
        const session = await suite.t.app.deps.db.session.findFirst({
          where: { userId: owner.userId },
          orderBy: { createdAt: "desc" },
        });
        assert.ok(session?.revokedAt, "the console's session is revoked");
        await page.reload();
        await page.getByRole("button", { name: "Log in" }).waitFor();
        assert.equal(await page.getByRole("button", { name: "Log out" }).count(), 0);
        await tab.reload();
        await tab.getByRole("button", { name: "Log in" }).waitFor();
        assert.deepEqual(incidents, []);
        await close();
      },
    );

    await t.step("a member of two workspaces switches between them", async () => {
      const other = await owner.client.post("/api/workspaces", { name: "Beta" });
      assert.equal(other.status, 201);
      await suite.t.seed.agent(owner.client.in(other.body.id), { name: "Bruno" });
      const { page, close } = await suite.open("/");
      await signIn(page, owner);
      const agent = page.getByLabel("Agent");
      await page.getByRole("option", { name: "Ana" }).waitFor({ state: "attached" });
      await page.getByLabel("Workspace").selectOption({ label: "Beta" });
      await page.getByRole("option", { name: "Bruno" }).waitFor({ state: "attached" });
      // Beta's one agent, beside "All agents".
      assert.equal(await agent.locator("option:not([value=''])").count(), 1);
      // The choice survives a reload.
      await page.reload();
      await page.getByRole("option", { name: "Bruno" }).waitFor({ state: "attached" });
      assert.equal(await page.getByLabel("Workspace").inputValue(), other.body.id);
      assert.equal(await agent.locator("option:not([value=''])").count(), 1);
      await page.getByLabel("Workspace").selectOption(workspaceId);
      await page.getByRole("option", { name: "Ana" }).waitFor({ state: "attached" });
      await close();
    });

    await t.step(
      "a session revoked elsewhere (a password change) is signed out on its next call",
      async () => {
        const { page, close } = await suite.open("/");
        await signIn(page, owner);
        const changed = await owner.client.post("/api/auth/password", {
          currentPassword: owner.password,
          newPassword: "a brand new password",
        });
        assert.equal(changed.status, 204);
        // Its next call: the Agents screen's read. (A call of the page's own may come first and sign
        // it out before a click could reach the link, so the screen is opened by its address.)
        await page.evaluate(() => location.hash = "#/agents");
        await page.getByText("Your session has ended. Log in again.").waitFor();
        await page.getByRole("button", { name: "Log in" }).waitFor();
        await close();
      },
    );
  } finally {
    await suite.close();
  }
});
