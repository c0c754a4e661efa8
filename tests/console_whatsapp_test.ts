/**
 * WhatsApp's rules in the console, in a browser: the conversation shows its window's time left,
 * counted down on the page's clock (Playwright's, moved by the test: no waiting), or "Window
 * closed" once it has passed or Meta refused with 131047; each outgoing message shows sending,
 * sent, delivered, read, or failed with Meta's reason (its answer to the send, or a later failed
 * status) or a readable WINDOW_CLOSED; outside the window "Reply" is disabled with why. API
 * channels show no window. The Graph stand-in answers as Meta documents, statuses are Meta's shape.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { assertFitsWidth, consoleSuite, PHONE, signIn } from "./_helpers/browser.ts";
import { graphError, waitUntil } from "./_helpers/conversations.ts";
import { startReceiver } from "./_helpers/receiver.ts";
import { createWhatsAppChannel, customerWrites, envelope, postSigned } from "./_helpers/whatsapp.ts";
import { MESSAGE_SEND_QUEUE } from "../src/conversations/outbound.ts";

const HOUR = 3600_000;
const MINUTE = 60_000;

/** Meta's answer to a free-form message outside the window. */
const REENGAGEMENT = () =>
  graphError(
    400,
    131047,
    "(#131047) Re-engagement message",
    "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
  );

/** Meta's answer to an accepted send. */
const accepted = (i: number) =>
  Response.json({
    messaging_product: "whatsapp",
    contacts: [{ input: "16505551234", wa_id: "16505551234" }],
    messages: [{ id: `wamid.OUT${i}` }],
  });

/** Meta's status webhook for the message `wamid` (its documented example, with pricing or errors). */
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

Deno.test("the window's time left, each message's state and Meta's reasons, Reply closed with the window", async (t) => {
  // The first send is held until the test has seen it "sending"; the second is refused with 131047.
  let letFirstSendThrough!: () => void;
  const firstSendHeld = new Promise<void>((resolve) => letFirstSendThrough = resolve);
  const graph = startReceiver(async (_call, i) => {
    if (i === 0) await firstSendHeld;
    return i === 1 ? REENGAGEMENT() : accepted(i);
  });
  // The agent does not answer (a long grouping window): only people write here.
  const suite = await consoleSuite({ WHATSAPP_GRAPH_URL: graph.url(""), GROUPING_MEDIUM_MS: "600000" });
  const db = suite.t.app.deps.db;
  try {
    const { owner } = await suite.t.seed.workspace();
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const first = await customerWrites(suite.t, channel, "wamid.IN1", "Hi there");
    const conversationId = first.conversationId;
    const path = `/api/conversations/${conversationId}`;
    const conversationRow = () => db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
    // The customer wrote 20 h 47 min 1 s ago, as far as the server knows: 3 h 12 min 59 s are left.
    const left = 3 * HOUR + 12 * MINUTE + 59_000;
    const wrote = new Date(Date.now() - 24 * HOUR + left);
    await db.conversation.update({ where: { id: conversationId }, data: { lastContactMessageAt: wrote } });

    // The page's clock starts then (the server's time, give or take the statements since) and
    // runs from there; the test moves it on.
    const { page, refused, incidents, close } = await suite.open("about:blank");
    await page.clock.install({ time: wrote.getTime() + 24 * HOUR - left });
    await page.goto("/");
    await signIn(page, owner);
    await page.goto(`/#/conversation/${conversationId}`);
    const messages = page.getByRole("list", { name: "Messages" });
    const message = (text: string) => messages.getByRole("listitem").filter({ hasText: text });
    const windowLine = page.locator("p.window");
    const reply = page.getByLabel("Reply");

    await t.step("the window's time left, counted down as the page's clock runs", async () => {
      await message("Hi there").waitFor();
      await page.getByText("Window closes in 3 h 12 min", { exact: true }).waitFor();
      await page.clock.fastForward("01:00:00");
      await page.getByText("Window closes in 2 h 12 min", { exact: true }).waitFor();
      await page.getByRole("button", { name: "Take over" }).click();
      await page.getByRole("heading", { name: /HUMAN/ }).waitFor();
      assert.equal(await reply.isEnabled(), true);
    });

    await t.step("a reply shows sending, then sent, delivered and read as Meta reports them", async () => {
      await reply.fill("Bom dia, Sheena!");
      await page.getByRole("button", { name: "Send" }).click();
      await graph.waitForCalls(1);
      const sent = message("Bom dia, Sheena!");
      await sent.getByText("sending", { exact: true }).waitFor();
      letFirstSendThrough();
      const stored = await waitUntil(
        () => db.message.findFirst({ where: { conversationId, content: "Bom dia, Sheena!" } }),
        (m) => m?.status === "SENT",
      );
      // The page reads the messages again while one is being sent or may still change state.
      await page.clock.fastForward(5_000);
      await sent.getByText("sent", { exact: true }).waitFor();
      for (const [state, shown] of [["delivered", "DELIVERED"], ["read", "READ"]] as const) {
        const posted = await postSigned(
          suite.t.anon,
          channel.id,
          statusOf(channel.phoneNumberId, "wamid.OUT0", state),
        );
        assert.equal(posted.status, 200);
        await waitUntil(
          () => db.message.findUniqueOrThrow({ where: { id: stored!.id } }),
          (m) => m.status === shown,
        );
        await page.clock.fastForward(15_000);
        await sent.getByText(state, { exact: true }).waitFor();
      }
    });

    await t.step(
      "Meta's 131047: failed with its reason, the window closed, Reply disabled with why",
      async () => {
        await reply.fill("Ainda aí?");
        await page.getByRole("button", { name: "Send" }).click();
        await graph.waitForCalls(2);
        await waitUntil(
          () => db.message.findFirst({ where: { conversationId, content: "Ainda aí?" } }),
          (m) => m?.status === "FAILED",
        );
        await page.clock.fastForward(5_000);
        const failed = message("Ainda aí?");
        await failed.getByText("failed", { exact: true }).waitFor();
        await failed.getByText(
          "Not delivered: (#131047) Re-engagement message: Message failed to send because more than 24 hours " +
            "have passed since the customer last replied to this number.",
          { exact: true },
        ).waitFor();
        // The failure closed the window (the API says so too): the page reads the conversation again.
        assert.deepEqual((await owner.client.get(path)).body.window.open, false);
        await windowLine.filter({ hasText: /^Window closed$/ }).waitFor();
        assert.equal(await reply.isDisabled(), true);
        assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
        await page.getByText(
          "Window closed: WhatsApp takes only an approved template until the customer writes again.",
        ).waitFor();
        assert.equal(await reply.getAttribute("aria-describedby"), "reply-why");
      },
    );

    await t.step("a message held back outside the window says so (WINDOW_CLOSED)", async () => {
      const late = await db.message.create({
        data: {
          conversationId,
          channelId: channel.id,
          direction: "OUTBOUND",
          senderKind: "AI",
          content: "Resposta tardia",
          status: "PENDING",
        },
      });
      await suite.t.app.deps.jobs.send(db, MESSAGE_SEND_QUEUE, [{
        data: { messageId: late.id, attempt: 1 },
      }]);
      await waitUntil(
        () => db.message.findUniqueOrThrow({ where: { id: late.id } }),
        (m) => m.status === "FAILED",
      );
      await reopen(page, conversationId);
      await message("Resposta tardia").getByText(
        "Not delivered: the customer's 24-hour window had closed; only a template reaches them until they write again.",
        { exact: true },
      ).waitFor();
      assert.equal(graph.calls.length, 2, "nothing sent to Meta");
    });

    await t.step("the customer writes: the window reopens live", async () => {
      await customerWrites(suite.t, channel, "wamid.IN2", "Still here");
      await message("Still here").waitFor();
      // The page's clock is an hour and a few seconds ahead of the server's.
      await windowLine.filter({ hasText: /^Window closes in 22 h \d+ min$/ }).waitFor();
      assert.equal(await reply.isEnabled(), true);
      assert.equal(await page.locator("#reply-why").count(), 0);
    });

    await t.step("a later failed status with 131047: its reason shown, the window closed", async () => {
      await reply.fill("Tudo certo?");
      await page.getByRole("button", { name: "Send" }).click();
      await graph.waitForCalls(3);
      const sent = await waitUntil(
        () => db.message.findFirst({ where: { conversationId, content: "Tudo certo?" } }),
        (m) => m?.status === "SENT",
      );
      const failure = statusOf(channel.phoneNumberId, sent!.externalId!, "failed", [{
        code: 131047,
        title: "Re-engagement message",
        message: "Re-engagement message",
        error_data: { details: "Message failed to send because more than 24 hours have passed." },
      }]);
      assert.equal((await postSigned(suite.t.anon, channel.id, failure)).status, 200);
      await waitUntil(
        () => db.message.findUniqueOrThrow({ where: { id: sent!.id } }),
        (m) => m.status === "FAILED",
      );
      await page.clock.fastForward(15_000);
      await message("Tudo certo?").getByText(
        "Not delivered: Re-engagement message: Message failed to send because more than 24 hours have passed.",
        { exact: true },
      ).waitFor();
      await windowLine.filter({ hasText: /^Window closed$/ }).waitFor();
      assert.equal(await reply.isDisabled(), true);
    });

    await t.step("reopened, the window closes on the page when its time runs out", async () => {
      await customerWrites(suite.t, channel, "wamid.IN3", "Hello?");
      await windowLine.filter({ hasText: /^Window closes in/ }).waitFor();
      const { lastContactMessageAt } = await conversationRow();
      const pageNow = await page.evaluate(() => Date.now());
      await page.clock.fastForward(lastContactMessageAt!.getTime() + 24 * HOUR - pageNow - 2 * MINUTE);
      await page.getByText("Window closes in 1 min", { exact: true }).waitFor();
      await page.clock.fastForward(2 * MINUTE);
      await windowLine.filter({ hasText: /^Window closed$/ }).waitFor();
      assert.equal(await reply.isDisabled(), true);
    });

    await t.step("on a phone the window, the states and the reasons fit the width", async () => {
      await page.setViewportSize(PHONE);
      await message("Ainda aí?").getByText("failed", { exact: true }).waitFor();
      await assertFitsWidth(page, "the conversation");
    });

    await t.step("an API channel's conversation shows no window", async () => {
      const api = await owner.client.post(`/api/agents/${agent.id}/channels`, { type: "API", label: "App" });
      const posted = await owner.client.post(`/api/channels/${api.body.id}/messages`, {
        contact: { externalId: "c-1", name: "Caio" },
        type: "TEXT",
        content: "Hello from the app",
      });
      assert.deepEqual(
        (await owner.client.get(`/api/conversations/${posted.body.conversationId}`)).body.window,
        {
          open: true,
          closesAt: null,
        },
      );
      await page.goto(`/#/conversation/${posted.body.conversationId}`);
      await page.getByRole("heading", { name: /Caio/ }).waitFor();
      await message("Hello from the app").waitFor();
      assert.equal(await windowLine.count(), 0);
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    letFirstSendThrough();
    await suite.close();
    await graph.close();
  }
});

/** Leaves the conversation for its list and opens it again (a hash change: the same page, signed in). */
async function reopen(page: Page, conversationId: string) {
  await page.getByRole("link", { name: "← Conversations" }).click();
  await page.getByRole("heading", { name: "Conversations" }).waitFor();
  await page.goto(`/#/conversation/${conversationId}`);
}
