/**
 * The agent's desk in a browser: the conversation list and the open conversation side by side at
 * 1280x800 and one at a time at 390x844 (with a way back); the keyboard (`j`/`k` move through the
 * list, `r` focuses "Reply", `?` lists the shortcuts and Escape closes them, Enter sends and
 * Shift+Enter adds a line); "Close" asks first. Every effect is read back through the API.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { assertFitsWidth, consoleSuite, emptied, PHONE, screenshot, signIn } from "./_helpers/browser.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";

const CONTACTS = [
  { externalId: "c-ana", name: "Ana Prado" },
  { externalId: "c-bea", name: "Bea Lima" },
  { externalId: "c-caio", name: "Caio Reis" },
];

Deno.test("the desk: list and conversation side by side, keyboard shortcuts, a confirmed close", async (t) => {
  const suite = await consoleSuite();
  try {
    const { workspaceId, owner } = await suite.t.seed.workspace();
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const channel = await seedChannel(suite.t.app, workspaceId, agent.id, "API");
    const ids: string[] = [];
    for (const contact of CONTACTS) {
      const m = await customerMessage(suite.t.app, {
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        contact,
        content: `Hello from ${contact.name}`,
      });
      ids.push(m.conversationId);
    }
    // Newest activity first: Caio, Bea, Ana.
    const listed = [...ids].reverse();
    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, owner);
    const list = page.getByRole("list", { name: "Conversations" });
    const openId = () => new URL(page.url()).hash.match(/^#\/conversation\/(.+)$/)?.[1];
    const heading = (name: string) =>
      page.getByRole("region", { name: "Open conversation" }).getByRole("heading", {
        name: new RegExp(name),
      });

    await t.step("at 1280x800 the list and the open conversation stand side by side", async () => {
      assert.deepEqual(await rowIds(page), listed);
      await list.getByRole("link", { name: /Bea Lima/ }).click();
      await heading("Bea Lima").waitFor();
      assert.equal(openId(), ids[1]);
      const listBox = (await page.getByRole("region", { name: "Conversation list" }).boundingBox())!;
      const openBox = (await page.getByRole("region", { name: "Open conversation" }).boundingBox())!;
      assert.ok(listBox.x + listBox.width <= openBox.x, "the list is left of the conversation");
      assert.ok(openBox.y < listBox.y + listBox.height, "on the same band of the page");
      assert.ok(openBox.width >= 600, `the conversation is ${openBox.width}px wide`);
      assert.equal(await list.getByRole("link", { name: /Bea Lima/ }).getAttribute("aria-current"), "page");
      await assertFitsWidth(page, "the desk");
    });

    await t.step("j and k open the next and previous conversation of the list", async () => {
      await page.keyboard.press("j");
      await heading("Ana Prado").waitFor();
      assert.equal(openId(), ids[0]);
      // The last of the list: j stays there.
      await page.keyboard.press("j");
      await page.keyboard.press("k");
      await heading("Bea Lima").waitFor();
      await page.keyboard.press("k");
      await heading("Caio Reis").waitFor();
      assert.equal(openId(), ids[2]);
    });

    await t.step("? lists the shortcuts, Escape closes the list", async () => {
      await page.keyboard.press("?");
      const dialog = page.getByRole("dialog", { name: "Keyboard shortcuts" });
      await dialog.waitFor();
      for (const key of ["j", "k", "r", "Enter", "Shift + Enter", "?", "Escape"]) {
        await dialog.getByText(key, { exact: true }).waitFor();
      }
      await screenshot(page, "desk-shortcuts");
      // The page behind does not take keys while the dialog is open.
      await page.keyboard.press("j");
      assert.equal(openId(), ids[2]);
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
    });

    await t.step(
      "r focuses Reply; Enter sends, Shift+Enter adds a line; typed j and k stay text",
      async () => {
        const taken = await owner.client.post(`/api/conversations/${ids[2]}/takeover`);
        assert.equal(taken.status, 200);
        await heading("HUMAN").waitFor();
        const reply = page.getByLabel("Reply");
        await page.keyboard.press("r");
        assert.equal(await reply.evaluate((el) => el === document.activeElement), true);
        assert.equal(await reply.inputValue(), "");
        await page.keyboard.type("Hi Caio, just a moment");
        await page.keyboard.press("Shift+Enter");
        await page.keyboard.type("kind regards");
        assert.equal(openId(), ids[2]);
        assert.equal(await reply.inputValue(), "Hi Caio, just a moment\nkind regards");
        await page.keyboard.press("Enter");
        await page.getByRole("list", { name: "Messages" }).getByText(/kind regards/).waitFor();
        // Emptied once the send is answered (the live feed may show the message before that).
        await emptied(reply);
        const messages = await owner.client.get(`/api/conversations/${ids[2]}/messages`);
        const human = messages.body.data.filter((m: { sender: string }) => m.sender === "HUMAN");
        assert.deepEqual(human.map((m: { content: string }) => m.content), [
          "Hi Caio, just a moment\nkind regards",
        ]);
        await screenshot(page, "desk");
      },
    );

    await t.step('"Close" asks first: "Cancel" keeps it, "Close conversation" closes it', async () => {
      await page.getByRole("button", { name: "Close", exact: true }).click();
      await page.getByRole("alertdialog").getByText("Close the conversation with Caio Reis?").waitFor();
      await page.getByRole("button", { name: "Cancel" }).click();
      await page.getByRole("alertdialog").waitFor({ state: "detached" });
      assert.equal((await owner.client.get(`/api/conversations/${ids[2]}`)).body.status, "HUMAN");
      await page.getByRole("button", { name: "Close", exact: true }).click();
      // Escape also keeps it open.
      await page.keyboard.press("Escape");
      await page.getByRole("alertdialog").waitFor({ state: "detached" });
      await page.getByRole("button", { name: "Close", exact: true }).click();
      await page.getByRole("button", { name: "Close conversation" }).click();
      await heading("CLOSED").waitFor();
      assert.equal((await owner.client.get(`/api/conversations/${ids[2]}`)).body.status, "CLOSED");
    });

    await t.step("at 390x844 the list, then the conversation full width with a way back", async () => {
      const phone = await suite.open("/", PHONE);
      await signIn(phone.page, owner);
      const phoneList = phone.page.getByRole("list", { name: "Conversations" });
      await phoneList.getByRole("link", { name: /Bea Lima/ }).waitFor();
      await assertFitsWidth(phone.page, "the list on a phone");
      assert.equal(await phone.page.getByRole("region", { name: "Open conversation" }).count(), 0);
      await phoneList.getByRole("link", { name: /Bea Lima/ }).click();
      const open = phone.page.getByRole("region", { name: "Open conversation" });
      await open.getByRole("heading", { name: /Bea Lima/ }).waitFor();
      await phoneList.waitFor({ state: "hidden" });
      const box = (await open.boundingBox())!;
      assert.ok(box.width >= PHONE.width - 40, `the conversation is ${box.width}px wide`);
      await assertFitsWidth(phone.page, "a conversation on a phone");
      await phone.page.getByRole("link", { name: "← Conversations" }).click();
      await phoneList.getByRole("link", { name: /Bea Lima/ }).waitFor();
      assert.equal(await open.count(), 0);
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

/** The conversation ids of the list's rows, in order. */
async function rowIds(page: Page): Promise<string[]> {
  const links = page.getByRole("list", { name: "Conversations" }).getByRole("link");
  await links.first().waitFor();
  return (await links.evaluateAll((as) => as.map((a) => a.getAttribute("href")!))).map((h) =>
    h.split("/").at(-1)!
  );
}
