/**
 * "My account" in the console, for every member (an AGENT here): "Log out everywhere else" ends the
 * member's other sessions (another browser is signed out at its next event, a script's login
 * answers 401) and keeps this one; "Change password" refuses a wrong current password and a
 * mistyped repetition, then changes it (read back by logging in). Desk and phone.
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

Deno.test("a member logs out everywhere else and changes the password from the console", async (t) => {
  const suite = await consoleSuite();
  try {
    const { app, seed, anon } = suite.t;
    const { workspaceId, owner } = await seed.workspace("Acme");
    // An agent, so the conversations screen holds a live feed.
    await seed.agent(owner.client, { name: "Ana" });
    const agent = await seed.member(workspaceId, "AGENT");
    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, agent);

    await t.step("Log out everywhere else: other sessions end, this one goes on", async () => {
      // Another browser of the same member, on its conversations with their live feed up.
      const other = await suite.open("/");
      // Listening for the ack as soon as the socket opens: it may come before the sign-in returns.
      const acked = other.page.waitForEvent("websocket").then((socket) =>
        socket.waitForEvent("framereceived", {
          predicate: (f) => String(f.payload).includes("connection_ack"),
        })
      );
      await signIn(other.page, agent);
      await acked;
      await page.getByRole("link", { name: "My account" }).click();
      await page.getByRole("heading", { name: "My account" }).waitFor();
      await page.getByText(agent.email).waitFor();
      await page.getByRole("button", { name: "Log out everywhere else" }).click();
      // The seeded login and the other browser.
      await page.getByText("Logged out everywhere else: 2 other sessions ended.").waitFor();
      await other.page.getByText("Your session has ended. Log in again.").waitFor();
      assert.equal((await agent.client.get("/api/agents")).status, 401);
      // This page still acts.
      await page.getByRole("link", { name: "Conversations" }).click();
      await page.getByRole("heading", { name: "Conversations" }).waitFor();
      assert.deepEqual(other.incidents, []);
      await other.close();
      await page.getByRole("link", { name: "My account" }).click();
      await page.getByRole("button", { name: "Log out everywhere else" }).click();
      await page.getByText("No other session was open.").waitFor();
    });

    await t.step("Change password: wrong current password, a mistyped repetition, then changed", async () => {
      const form = page.getByRole("form", { name: "Change password" });
      const fill = async (current: string, next: string, again: string) => {
        await form.getByLabel("Current password").fill(current);
        await form.getByLabel("New password", { exact: true }).fill(next);
        await form.getByLabel("New password again").fill(again);
        await form.getByRole("button", { name: "Change password" }).click();
      };
      await fill("not my password", "a new long password", "a new long password");
      await form.getByRole("alert").filter({ hasText: "The current password is wrong." }).waitFor();
      await fill(agent.password, "a new long password", "a new long pasword");
      await form.getByRole("alert").filter({ hasText: "The new password and its repetition differ." })
        .waitFor();
      assert.deepEqual(await unlabelledControls(page), []);
      await fill(agent.password, "a new long password", "a new long password");
      await form.getByRole("status").filter({ hasText: "Password changed." }).waitFor();
      assert.equal(await form.getByLabel("Current password").inputValue(), "");
      const old = await anon.post("/api/auth/login", { email: agent.email, password: agent.password });
      assert.equal(old.status, 401);
      const fresh = await anon.post("/api/auth/login", {
        email: agent.email,
        password: "a new long password",
      });
      assert.equal(fresh.status, 200);
      assert.equal((await new Client(app, fresh.body.token, workspaceId).get("/api/agents")).status, 200);
      await screenshot(page, "account");
    });

    await t.step("on a phone: the account fits the width", async () => {
      const p = await suite.open("/", PHONE);
      await signIn(p.page, { email: agent.email, password: "a new long password" });
      await p.page.getByRole("link", { name: "My account" }).click();
      await p.page.getByRole("button", { name: "Log out everywhere else" }).waitFor();
      await assertFitsWidth(p.page, "My account");
      await screenshot(p.page, "account-phone");
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
