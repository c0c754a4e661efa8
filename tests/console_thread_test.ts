/**
 * The open conversation's tools in a browser: the contact panel (name, address, the window's time
 * left, earlier conversations as links); each outbound message's state pushed live (sent,
 * delivered, read, failed with Meta's reason: no clock moved, no reading again); "Send again" on a
 * failed message; saved replies offered by typing `/` in "Reply" (arrow keys and Enter pick one).
 * Every effect is read back through the API; at 1280x800, and the panel and the offer at 390x844.
 */
import assert from "node:assert/strict";
import { assertFitsWidth, consoleSuite, PHONE, screenshot, signIn } from "./_helpers/browser.ts";
import { startReceiver } from "./_helpers/receiver.ts";
import { createWhatsAppChannel, customerWrites, envelope, postSigned } from "./_helpers/whatsapp.ts";

/** Meta's answer to an accepted send. */
const accepted = (i: number) =>
  Response.json({
    messaging_product: "whatsapp",
    contacts: [{ input: "16505551234", wa_id: "16505551234" }],
    messages: [{ id: `wamid.OUT${i}` }],
  });

/** Meta's status webhook for the message `wamid`. */
const statusOf = (phoneNumberId: string, wamid: string, status: string, errors?: unknown[]) =>
  envelope(phoneNumberId, {
    statuses: [{
      id: wamid,
      status,
      timestamp: "1749416383",
      recipient_id: "16505551234",
      ...(errors ? { errors } : {
        conversation: { id: "CONVERSATION_ID", origin: { type: "service" } },
        pricing: { billable: true, pricing_model: "PMP", category: "service", type: "regular" },
      }),
    }],
  });

const UNDELIVERABLE = [{
  code: 131026,
  title: "Message undeliverable",
  message: "Message undeliverable",
  error_data: { details: "The recipient's phone number is not on WhatsApp." },
}];

Deno.test("the conversation's contact, live message states, Send again, and saved replies", async (t) => {
  const graph = startReceiver((_call, i) => accepted(i));
  // The agent does not answer (a long grouping window): only people write here.
  const suite = await consoleSuite({ WHATSAPP_GRAPH_URL: graph.url(""), GROUPING_MEDIUM_MS: "600000" });
  const db = suite.t.app.deps.db;
  try {
    const { owner } = await suite.t.seed.workspace();
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    // An earlier conversation with the same customer, closed; then the one worked on here.
    const earlier =
      (await customerWrites(suite.t, channel, "wamid.IN1", "Last week's question")).conversationId;
    assert.equal((await owner.client.post(`/api/conversations/${earlier}/close`)).status, 200);
    const conversationId =
      (await customerWrites(suite.t, channel, "wamid.IN2", "Hello again")).conversationId;
    assert.notEqual(conversationId, earlier);
    assert.equal((await owner.client.post(`/api/conversations/${conversationId}/takeover`)).status, 200);
    for (
      const [shortcut, content] of [
        ["thanks", "Thank you for waiting, we are on it."],
        ["thanks-bye", "Thanks, have a nice day!"],
        ["hours", "We are open 9 to 18, Monday to Friday."],
      ]
    ) {
      assert.equal((await owner.client.post("/api/saved-replies", { shortcut, content })).status, 201);
    }

    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, owner);
    await page.goto(`/#/conversation/${conversationId}`);
    const open = page.getByRole("region", { name: "Open conversation" });
    const contact = open.getByRole("complementary", { name: "Contact" });
    const messages = open.getByRole("list", { name: "Messages" });
    const message = (text: string) => messages.getByRole("listitem").filter({ hasText: text });
    const reply = page.getByLabel("Reply");

    await t.step("the contact: name, address, the window's time left, earlier conversations", async () => {
      await contact.getByText("Sheena Nelson").waitFor();
      await contact.getByText("16505551234").waitFor();
      await contact.getByText(/^Window closes in 2[34] h \d+ min$/).waitFor();
      const links = contact.getByRole("navigation", { name: "Earlier conversations" }).getByRole("link");
      assert.equal(await links.count(), 1);
      const contactId = (await owner.client.get(`/api/conversations/${conversationId}`)).body.contact.id;
      const others = await owner.client.get(`/api/contacts/${contactId}/conversations`);
      assert.deepEqual(others.body.data.map((c: { id: string }) => c.id), [conversationId, earlier]);
      assert.equal(await links.first().getAttribute("href"), `#/conversation/${earlier}`);
      await links.first().getByText("CLOSED").waitFor();
    });

    await t.step("a reply's state follows Meta's statuses live: sent, delivered, read", async () => {
      await reply.fill("Bom dia, Sheena!");
      await page.keyboard.press("Enter");
      const sent = message("Bom dia, Sheena!");
      await sent.getByText("sent", { exact: true }).waitFor();
      for (const [state, stored] of [["delivered", "DELIVERED"], ["read", "READ"]] as const) {
        const posted = await postSigned(
          suite.t.anon,
          channel.id,
          statusOf(channel.phoneNumberId, "wamid.OUT0", state),
        );
        assert.equal(posted.status, 200);
        await sent.getByText(state, { exact: true }).waitFor();
        const row = await db.message.findFirstOrThrow({
          where: { conversationId, content: "Bom dia, Sheena!" },
        });
        assert.equal(row.status, stored);
      }
    });

    await t.step('a failed message shows Meta\'s reason, and "Send again" sends a new one', async () => {
      await reply.fill("Are you still there?");
      await page.keyboard.press("Enter");
      const first = message("Are you still there?").first();
      await first.getByText("sent", { exact: true }).waitFor();
      const posted = await postSigned(
        suite.t.anon,
        channel.id,
        statusOf(channel.phoneNumberId, "wamid.OUT1", "failed", UNDELIVERABLE),
      );
      assert.equal(posted.status, 200);
      await first.getByText("failed", { exact: true }).waitFor();
      await first.getByText(/Message undeliverable: The recipient's phone number is not on WhatsApp\./)
        .waitFor();
      await screenshot(page, "desk-conversation");
      await first.getByRole("button", { name: "Send again" }).click();
      await message("Are you still there?").nth(1).getByText("sent", { exact: true }).waitFor();
      // The failed one stays as it was, and offers no second "Send again".
      await first.getByText("failed", { exact: true }).waitFor();
      assert.equal(await open.getByRole("button", { name: "Send again" }).count(), 0);
      const listed = await owner.client.get(`/api/conversations/${conversationId}/messages`);
      const copies = listed.body.data.filter((m: { content: string }) =>
        m.content === "Are you still there?"
      );
      assert.deepEqual(copies.map((m: { status: string }) => m.status), ["FAILED", "SENT"]);
      assert.equal(copies[1].resentFromId, copies[0].id);
      assert.equal(graph.calls.filter((c) => c.body.includes("Are you still there?")).length, 2);
    });

    await t.step("typing / in Reply offers the saved replies; arrow keys and Enter pick one", async () => {
      await reply.fill("");
      await reply.pressSequentially("Hi! /than");
      const offer = page.getByRole("listbox", { name: "Saved replies" });
      await offer.waitFor();
      assert.deepEqual(await offer.getByRole("option").allInnerTexts(), [
        "/thanks Thank you for waiting, we are on it.",
        "/thanks-bye Thanks, have a nice day!",
      ]);
      assert.equal(
        await offer.getByRole("option", { selected: true }).innerText(),
        await offer.getByRole("option").first().innerText(),
      );
      await page.keyboard.press("ArrowDown");
      await offer.getByRole("option", { name: /thanks-bye/, selected: true }).waitFor();
      await screenshot(page, "desk-saved-replies");
      await page.keyboard.press("Enter");
      await offer.waitFor({ state: "detached" });
      assert.equal(await reply.inputValue(), "Hi! Thanks, have a nice day!");
      // Escape dismisses an offer; Enter then sends.
      await reply.pressSequentially(" /hou");
      await offer.getByRole("option", { name: /hours/ }).waitFor();
      await page.keyboard.press("Escape");
      await offer.waitFor({ state: "detached" });
      await reply.press("Backspace");
      await reply.press("Backspace");
      await reply.press("Backspace");
      await reply.press("Backspace");
      await reply.press("Backspace");
      await page.keyboard.press("Enter");
      await message("Hi! Thanks, have a nice day!").waitFor();
      const listed = await owner.client.get(`/api/conversations/${conversationId}/messages`);
      assert.equal(listed.body.data.at(-1).content, "Hi! Thanks, have a nice day!");
    });

    await t.step("at 390x844 the contact and the saved replies fit the width", async () => {
      const phone = await suite.open("/", PHONE);
      await signIn(phone.page, owner);
      await phone.page.goto(`/#/conversation/${conversationId}`);
      const phoneContact = phone.page.getByRole("complementary", { name: "Contact" });
      await phoneContact.getByText("16505551234").waitFor();
      await phone.page.getByText(/Message undeliverable/).waitFor();
      await assertFitsWidth(phone.page, "a conversation on a phone");
      await phone.page.getByLabel("Reply").pressSequentially("/hours");
      await phone.page.getByRole("listbox", { name: "Saved replies" }).getByRole("option", { name: /hours/ })
        .click();
      assert.equal(
        await phone.page.getByLabel("Reply").inputValue(),
        "We are open 9 to 18, Monday to Friday.",
      );
      await assertFitsWidth(phone.page, "the saved replies on a phone");
      await phoneContact.getByRole("link").first().click();
      await phone.page.getByRole("heading", { name: /CLOSED/ }).waitFor();
      assert.equal(new URL(phone.page.url()).hash, `#/conversation/${earlier}`);
      assert.deepEqual(phone.refused, []);
      assert.deepEqual(phone.incidents, []);
      await phone.close();
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
    await graph.close();
  }
});
