/**
 * The desk's inbox in a browser, as an AGENT member: every agent's conversations, paged past 50
 * with "Load more", filtered by agent, "Mine", "Unassigned" and "Search"; each row's agent, holder
 * and unread count; the title's count of unread messages waiting for the member, raised live;
 * opening a conversation marks it read; "Assign to me"; a reply in a chat someone else holds asks
 * to take it over first; a browser notification, asked for from a button. Every effect is read back
 * through the API; at 1280x800, and the filters and "Assign to me" at 390x844.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { assertFitsWidth, consoleSuite, liveFeeds, PHONE, screenshot, signIn } from "./_helpers/browser.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";
import type { Client } from "./_helpers/app.ts";

/** Ana's conversations: more than one page of 50. */
const ANA_CONTACTS = 53;

Deno.test("the inbox: every agent, pages, filters, search, unread counts, assignment and alerts", async (t) => {
  const suite = await consoleSuite();
  try {
    const { workspaceId, owner } = await suite.t.seed.workspace();
    const member = await suite.t.seed.member(workspaceId, "AGENT");
    const ana = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const bruno = await suite.t.seed.agent(owner.client, { name: "Bruno" });
    const anaLine = await seedChannel(suite.t.app, workspaceId, ana.id, "API");
    const brunoLine = await seedChannel(suite.t.app, workspaceId, bruno.id, "API");
    const write = (agentId: string, channelId: string, externalId: string, name: string, content: string) =>
      customerMessage(suite.t.app, {
        workspaceId,
        agentId,
        channelId,
        contact: { externalId, name },
        content,
      });
    for (let i = 0; i < ANA_CONTACTS; i++) {
      await write(ana.id, anaLine.id, `ana-${i}`, `Customer ${String(i).padStart(2, "0")}`, `Question ${i}`);
    }
    const zoe = await write(bruno.id, brunoLine.id, "bruno-zoe", "Zoe Quintana", "My parcel never arrived");
    const yuri = await write(bruno.id, brunoLine.id, "bruno-yuri", "Yuri Tanaka", "Can I change my booking?");

    const { page, refused, incidents, close } = await suite.open("/");
    await recordNotifications(page);
    await signIn(page, member);
    const list = page.getByRole("list", { name: "Conversations" });
    const row = (name: string) => list.getByRole("link", { name: new RegExp(name) });
    const open = page.getByRole("region", { name: "Open conversation" });
    // The desk's feed is up before anything changes elsewhere.
    await row("Yuri Tanaka").waitFor();
    await liveFeeds(suite.t.app, 1);

    await t.step(
      "every agent's conversations, 50 at a time, with each row's agent, holder and unread",
      async () => {
        assert.equal(await rows(page), 50);
        await row("Yuri Tanaka").getByText("Bruno · Unassigned").waitFor();
        assert.equal(await row("Yuri Tanaka").locator(".unread").innerText(), "1\nunread");
        await page.getByRole("button", { name: "Load more" }).click();
        await row("Customer 00").waitFor();
        assert.equal(await rows(page), ANA_CONTACTS + 2);
        assert.equal(await page.getByRole("button", { name: "Load more" }).count(), 0);
        assert.deepEqual(await rowIds(page), await listed(member.client, ""));
        await page.getByLabel("Agent").selectOption({ label: "Bruno" });
        await showsRows(page, [yuri.conversationId, zoe.conversationId]);
        assert.deepEqual(await rowIds(page), await listed(member.client, `&agentId=${bruno.id}`));
        assert.equal(await title(page), "Switchboard");
      },
    );

    await t.step("a customer's message in a HUMAN chat nobody holds raises the title, live", async () => {
      assert.equal(
        (await owner.client.post(`/api/conversations/${zoe.conversationId}/takeover`)).status,
        200,
      );
      const released = await owner.client.post(`/api/conversations/${zoe.conversationId}/assign`, {
        userId: null,
      });
      assert.equal(released.body.assignee, null);
      await waitTitle(page, "(1) Switchboard");
      await write(bruno.id, brunoLine.id, "bruno-zoe", "Zoe Quintana", "Hello? Anyone?");
      await waitTitle(page, "(2) Switchboard");
      await row("Zoe Quintana").locator(".unread").getByText("2").waitFor();
      // The API counts the same for this member.
      assert.equal((await member.client.get(`/api/conversations/${zoe.conversationId}`)).body.unread, 2);
      await screenshot(page, "desk-inbox");
    });

    await t.step("opening a conversation marks it read", async () => {
      await row("Zoe Quintana").click();
      await open.getByText("Unassigned", { exact: true }).waitFor();
      await waitTitle(page, "Switchboard");
      await row("Zoe Quintana").locator(".unread").waitFor({ state: "detached" });
      assert.equal((await member.client.get(`/api/conversations/${zoe.conversationId}`)).body.unread, 0);
      // Others' counts are their own.
      assert.equal((await owner.client.get(`/api/conversations/${zoe.conversationId}`)).body.unread, 2);
    });

    await t.step('"Assign to me", then "Mine" and "Unassigned"', async () => {
      await open.getByRole("button", { name: "Assign to me" }).click();
      await open.getByText("Assigned to you").waitFor();
      const got = await member.client.get(`/api/conversations/${zoe.conversationId}`);
      assert.equal(got.body.assignee.id, member.userId);
      await row("Zoe Quintana").getByText(/Bruno · User \d+/).waitFor();
      await page.getByLabel("Mine").check();
      await showsRows(page, [zoe.conversationId]);
      assert.deepEqual(await rowIds(page), await listed(member.client, `&agentId=${bruno.id}&assignee=me`));
      await page.getByLabel("Unassigned").check();
      await showsRows(page, [yuri.conversationId]);
      await page.getByLabel("All", { exact: true }).check();
      await showsRows(page, [zoe.conversationId, yuri.conversationId]);
    });

    await t.step("a reply in a chat someone else holds first asks to take it over", async () => {
      assert.equal(
        (await owner.client.post(`/api/conversations/${yuri.conversationId}/takeover`)).status,
        200,
      );
      await row("Yuri Tanaka").click();
      await open.getByText(/^Assigned to User \d+$/).waitFor();
      await page.getByLabel("Reply").fill("Hi Yuri, I can help with that.");
      await page.keyboard.press("Enter");
      const ask = page.getByRole("alertdialog");
      await ask.getByText(/holds this conversation/).waitFor();
      // Nothing sent and nothing changed hands yet.
      assert.equal(
        (await member.client.get(`/api/conversations/${yuri.conversationId}`)).body.assignee.id,
        owner.userId,
      );
      await ask.getByRole("button", { name: "Take it over and send" }).click();
      await open.getByRole("list", { name: "Messages" }).getByText("Hi Yuri, I can help with that.")
        .waitFor();
      await open.getByText("Assigned to you").waitFor();
      const got = await member.client.get(`/api/conversations/${yuri.conversationId}`);
      assert.equal(got.body.assignee.id, member.userId);
      const messages = await member.client.get(`/api/conversations/${yuri.conversationId}/messages`);
      assert.deepEqual(
        messages.body.data.filter((m: { sender: string }) => m.sender === "HUMAN").map((
          m: { content: string },
        ) => m.content),
        ["Hi Yuri, I can help with that."],
      );
    });

    await t.step('"Search" finds conversations by name, number and words of a message', async () => {
      await page.getByLabel("Agent").selectOption("");
      const search = page.getByLabel("Search");
      await search.fill("quintana");
      await showsRows(page, [zoe.conversationId]);
      assert.deepEqual(await rowIds(page), await listed(member.client, "&search=quintana"));
      await search.fill("ana-17");
      await showsRows(page, await listed(member.client, "&search=ana-17"));
      await row("Customer 17").waitFor();
      assert.equal(await rows(page), 1);
      await search.fill("booking");
      await showsRows(page, [yuri.conversationId]);
      await search.fill("");
      await row("Customer 49").waitFor();
    });

    await t.step(
      "a notification, once asked for from a button, for a new message waiting for the member",
      async () => {
        assert.deepEqual(await page.evaluate(() => globalThis.recorded.asked), 0);
        await page.getByRole("button", { name: "Turn on notifications" }).click();
        await page.getByRole("button", { name: "Turn on notifications" }).waitFor({ state: "detached" });
        assert.equal(await page.evaluate(() => globalThis.recorded.asked), 1);
        await row("Customer 52").click();
        await open.getByRole("heading", { name: /Customer 52/ }).waitFor();
        // Not for a chat the agent answers (OPEN, nobody holds it); then one for Zoe's, the member's own.
        await write(ana.id, anaLine.id, "ana-3", "Customer 03", "Still there?");
        await write(bruno.id, brunoLine.id, "bruno-zoe", "Zoe Quintana", "It is urgent");
        await page.waitForFunction(() => globalThis.recorded.shown.length > 0);
        assert.deepEqual(await page.evaluate(() => globalThis.recorded.shown), [
          { title: "Zoe Quintana", body: "It is urgent" },
        ]);
        await waitTitle(page, "(1) Switchboard");
      },
    );

    await t.step('at 390x844 the filters, the rows and "Assign to me" work', async () => {
      const phone = await suite.open("/", PHONE);
      await signIn(phone.page, owner);
      const phoneList = phone.page.getByRole("list", { name: "Conversations" });
      await phoneList.getByRole("link", { name: /Yuri Tanaka/ }).waitFor();
      await assertFitsWidth(phone.page, "the inbox on a phone");
      await phone.page.getByLabel("Search").fill("Customer 3");
      await phoneList.getByRole("link", { name: /Customer 30/ }).waitFor();
      await phoneList.getByRole("link", { name: /Yuri Tanaka/ }).waitFor({ state: "detached" });
      await phoneList.getByRole("link", { name: /Customer 30/ }).click();
      const phoneOpen = phone.page.getByRole("region", { name: "Open conversation" });
      await phoneOpen.getByRole("button", { name: "Assign to me" }).click();
      await phoneOpen.getByText("Assigned to you").waitFor();
      await assertFitsWidth(phone.page, "a conversation on a phone");
      await screenshot(phone.page, "desk-phone");
      await phone.page.getByRole("link", { name: "← Conversations" }).click();
      await phone.page.getByLabel("Mine").check();
      const customer30 = await listed(owner.client, "&assignee=me&search=customer%2030");
      assert.equal(customer30.length, 1);
      await showsRows(phone.page, customer30);
      await phoneList.getByRole("link", { name: /Customer 30/ }).waitFor();
      assert.deepEqual(phone.refused, []);
      assert.deepEqual(phone.incidents, []);
      await phone.close();
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
  }
});

declare global {
  var recorded: { asked: number; shown: { title: string; body?: string }[] };
}

/**
 * Stands in for the browser's Notification before the page's scripts run: its permission is
 * "default" until asked, and each notification shown is recorded rather than sent to the desktop.
 */
async function recordNotifications(page: Page) {
  await page.addInitScript(() => {
    globalThis.recorded = { asked: 0, shown: [] };
    class RecordedNotification {
      static permission = "default";
      static requestPermission() {
        globalThis.recorded.asked++;
        RecordedNotification.permission = "granted";
        return Promise.resolve(RecordedNotification.permission);
      }
      onclick: (() => void) | null = null;
      constructor(title: string, options?: { body?: string }) {
        globalThis.recorded.shown.push({ title, body: options?.body });
      }
      close() {}
    }
    Object.defineProperty(globalThis, "Notification", { value: RecordedNotification, configurable: true });
  });
  await page.reload();
}

const rows = (page: Page) => page.getByRole("list", { name: "Conversations" }).getByRole("link").count();

/** The conversation ids of the list's rows, in order. */
async function rowIds(page: Page): Promise<string[]> {
  const links = page.getByRole("list", { name: "Conversations" }).getByRole("link");
  return (await links.evaluateAll((as) => as.map((a) => a.getAttribute("href")!))).map((h) =>
    h.split("/").at(-1)!
  );
}

/** Waits until the list shows exactly the conversations `ids`, in this order. */
async function showsRows(page: Page, ids: string[]) {
  await page.waitForFunction(
    (want) =>
      JSON.stringify(
        [...document.querySelectorAll<HTMLElement>("ul.conversations > li[data-id]")].map((li) =>
          li.dataset.id
        ),
      ) === want,
    JSON.stringify(ids),
  ).catch(async (e) => {
    throw new Error(`the list shows ${JSON.stringify(await rowIds(page))}, not ${JSON.stringify(ids)}: ${e}`);
  });
}

/** Every conversation id the API lists for `client` with the query `filters` (`&agentId=...`), in order. */
async function listed(client: Client, filters: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await client.get(
      `/api/conversations?limit=100${filters}${cursor ? `&cursor=${cursor}` : ""}`,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    ids.push(...res.body.data.map((c: { id: string }) => c.id));
    cursor = res.body.nextCursor;
  } while (cursor);
  return ids;
}

const title = (page: Page) => page.evaluate(() => document.title);
const waitTitle = (page: Page, expected: string) =>
  page.waitForFunction((want) => document.title === want, expected);
