/**
 * WhatsApp's rules in the console, in a browser: the conversation shows its window's time left,
 * counted down on the page's clock (Playwright's, moved by the test: no waiting), or "Window
 * closed" once it has passed or Meta refused with 131047; each outgoing message shows sending,
 * sent, delivered, read, or failed with Meta's reason (its answer to the send, or a later failed
 * status) or a readable WINDOW_CLOSED; outside the window "Reply" is disabled with why, and a
 * "Template" picker sends one of the channel's APPROVED templates with its parameters (a 422 shown by
 * the input it names); an agent's settings take a reminder template. API channels show no window.
 * The Graph stand-in lists templates and answers sends as Meta documents; statuses are Meta's shape.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { assertFitsWidth, consoleSuite, liveFeeds, PHONE, signIn } from "./_helpers/browser.ts";
import { reengagementError, waitUntil } from "./_helpers/conversations.ts";
import { type Call, eventually, startReceiver } from "./_helpers/receiver.ts";
import { createWhatsAppChannel, customerWrites, envelope, postSigned } from "./_helpers/whatsapp.ts";
import type { Client } from "./_helpers/app.ts";
import type { App } from "../src/app.ts";
import { MESSAGE_SEND_QUEUE } from "../src/conversations/outbound.ts";

const HOUR = 3600_000;
const MINUTE = 60_000;

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

/**
 * The business account's templates, as Meta's "Get templates" reference lists them: a POSITIONAL
 * marketing template with a text header and a URL button, a NAMED utility one (its named-parameters
 * example), and one still PENDING review.
 */
const TEMPLATES = [
  {
    name: "seasonal_promotion",
    parameter_format: "POSITIONAL",
    components: [
      { type: "HEADER", format: "TEXT", text: "Our {{1}} is on!", example: { header_text: ["Summer Sale"] } },
      {
        type: "BODY",
        text: "Shop now through {{1}} and use code {{2}} to get {{3}} off of all merchandise.",
        example: { body_text: [["the end of August", "25OFF", "25%"]] },
      },
      { type: "FOOTER", text: "Use the buttons below to manage your marketing subscriptions" },
      {
        type: "BUTTONS",
        buttons: [
          { type: "QUICK_REPLY", text: "Unsubscribe from Promos" },
          {
            type: "URL",
            text: "Shop now",
            url: "https://www.luckyshrub.com/shop?promo={{1}}",
            example: ["https://www.luckyshrub.com/shop?promo=summer2023"],
          },
        ],
      },
    ],
    language: "en_US",
    status: "APPROVED",
    category: "MARKETING",
    id: "546151681022936",
  },
  {
    name: "order_confirmation",
    parameter_format: "NAMED",
    components: [{
      type: "BODY",
      text: "Thank you, {{first_name}}! Your order number is {{order_number}}.",
      example: {
        body_text_named_params: [
          { param_name: "first_name", example: "Pablo" },
          { param_name: "order_number", example: "860198-230332" },
        ],
      },
    }],
    language: "en_US",
    status: "APPROVED",
    category: "UTILITY",
    id: "546151681022937",
  },
  {
    name: "new_arrivals",
    parameter_format: "POSITIONAL",
    components: [{ type: "BODY", text: "New arrivals are in, {{1}}!", example: { body_text: [["Pablo"]] } }],
    language: "en_US",
    status: "PENDING",
    category: "MARKETING",
    id: "546151681022938",
  },
];

/** Meta's answer to `GET /{waba}/message_templates`: every template on one page. */
const templateList = () =>
  Response.json({ data: TEMPLATES, paging: { cursors: { before: "MAZDZD", after: "MjQZD" } } });

const WABA = "102290129340398";

/** A WhatsApp channel of the business account WABA, its templates synced. */
async function templateChannel(c: Client, agentId: string) {
  const created = { body: await createWhatsAppChannel(c, agentId, { businessAccountId: WABA }) };
  const synced = await c.post(`/api/channels/${created.body.id}/templates/sync`);
  assert.equal(synced.status, 200, JSON.stringify(synced.body));
  assert.equal(synced.body.data.length, TEMPLATES.length);
  return created.body;
}

Deno.test("the window's time left, each message's state, Reply closed with the window, templates and the reminder", async (t) => {
  // The first send is held until the test has seen it "sending"; the second is refused with 131047.
  let letFirstSendThrough!: () => void;
  const firstSendHeld = new Promise<void>((resolve) => letFirstSendThrough = resolve);
  const sends: Call[] = [];
  const graph = startReceiver(async (call) => {
    if (call.path.endsWith("/message_templates")) return templateList();
    const i = sends.push(call) - 1;
    if (i === 0) await firstSendHeld;
    return i === 1 ? reengagementError() : accepted(i);
  });
  const waitForSends = (n: number) => eventually(() => Promise.resolve(sends.length >= n || undefined));
  // The agent does not answer (a long grouping window): only people write here.
  const suite = await consoleSuite({ WHATSAPP_GRAPH_URL: graph.url(""), GROUPING_MEDIUM_MS: "600000" });
  const db = suite.t.app.deps.db;
  try {
    const { owner } = await suite.t.seed.workspace();
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const channel = await templateChannel(owner.client, agent.id);
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
      // The conversation's feeds (messageAdded, its status) are up before anything happens in it.
      await liveFeeds(suite.t.app, 2);
      await page.getByText("Window closes in 3 h 12 min", { exact: true }).waitFor();
      await page.clock.fastForward("01:00:00");
      await page.getByText("Window closes in 2 h 12 min", { exact: true }).waitFor();
      await page.getByRole("button", { name: "Take over" }).click();
      await page.getByRole("heading", { name: /HUMAN/ }).waitFor();
      assert.equal(await reply.isEnabled(), true);
    });

    await t.step("a reply shows sending, then sent, delivered and read as Meta reports them", async () => {
      await reply.fill("Bom dia, Sheena!");
      await page.getByRole("button", { name: "Send", exact: true }).click();
      await waitForSends(1);
      const sent = message("Bom dia, Sheena!");
      await sent.getByText("sending", { exact: true }).waitFor();
      letFirstSendThrough();
      const stored = await waitUntil(
        () => db.message.findFirst({ where: { conversationId, content: "Bom dia, Sheena!" } }),
        (m) => m?.status === "SENT",
      );
      // The states come pushed by the live feed; the clock moved on as the page would wait.
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
        await page.getByRole("button", { name: "Send", exact: true }).click();
        await waitForSends(2);
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
        // The failure closed the window (the API says so too): the live event carries it.
        assert.deepEqual((await owner.client.get(path)).body.window.open, false);
        await windowLine.filter({ hasText: /^Window closed$/ }).waitFor();
        assert.equal(await reply.isDisabled(), true);
        assert.equal(await page.getByRole("button", { name: "Send", exact: true }).isDisabled(), true);
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
      await reopen(page, suite.t.app, conversationId);
      await message("Resposta tardia").getByText(
        "Not delivered: the customer's 24-hour window had closed; only a template reaches them until they write again.",
        { exact: true },
      ).waitFor();
      assert.equal(sends.length, 2, "nothing sent to Meta");
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
      await page.getByRole("button", { name: "Send", exact: true }).click();
      await waitForSends(3);
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

    const form = page.getByRole("form", { name: "Send a template" });
    const picker = form.getByLabel("Template");
    const slot = (label: string) => form.getByLabel(label, { exact: true });
    /** The conversation's stored messages, as the API reads them. */
    const storedTemplates = async () =>
      ((await owner.client.get(`${path}/messages?limit=100`)).body.data as Array<Record<string, unknown>>)
        .filter((m) => m.type === "TEMPLATE");

    await t.step(
      "outside the window: the approved templates, one's slots, and a 422 shown by its input",
      async () => {
        await picker.waitFor();
        assert.deepEqual(await picker.locator("option").allTextContents(), [
          "Choose a template",
          "seasonal_promotion (en_US)",
          "order_confirmation (en_US)",
        ]);
        await picker.selectOption({ label: "seasonal_promotion (en_US)" });
        const preview = form.getByLabel("Preview");
        await preview.getByText("Use the buttons below to manage your marketing subscriptions").waitFor();
        assert.deepEqual(await preview.locator("mark").allTextContents(), [
          "{{1}}",
          "{{1}}",
          "{{2}}",
          "{{3}}",
        ]);
        assert.deepEqual(await form.locator(".template-buttons li").allTextContents(), [
          "Unsubscribe from Promos",
          "Shop now",
        ]);
        assert.equal(await slot("{{2}}").getAttribute("placeholder"), "25OFF");
        assert.equal(
          await slot("Button “Shop now”: end of its link").getAttribute("placeholder"),
          "summer2023",
        );
        await slot("Header {{1}}").fill("Winter Sale");
        await slot("{{1}}").fill("the end of March");
        // Five spaces in a row: WhatsApp would refuse it (132018), so the API does first.
        await slot("{{2}}").fill("WINTER     25");
        await slot("{{3}}").fill("30%");
        await slot("Button “Shop now”: end of its link").fill("winter2027");
        await preview.getByText("Winter Sale").waitFor();
        await form.getByRole("button", { name: "Send template" }).click();
        const problem = form.getByText(
          "must not contain more than four spaces in a row (WhatsApp refuses them)",
        );
        await problem.waitFor();
        assert.equal(await slot("{{2}}").getAttribute("aria-describedby"), await problem.getAttribute("id"));
        assert.equal(await slot("{{2}}").getAttribute("aria-invalid"), "true");
        assert.equal(await slot("{{1}}").getAttribute("aria-invalid"), null);
        assert.equal(sends.length, 3, "nothing sent to Meta");
        assert.deepEqual(await storedTemplates(), [], "nothing stored");
      },
    );

    await t.step(
      "the template sent with its parameters: Meta's payload, the stored message, shown",
      async () => {
        await slot("{{2}}").fill("WINTER25");
        await form.getByRole("button", { name: "Send template" }).click();
        await waitForSends(4);
        const sent = JSON.parse(sends[3].body);
        assert.equal(sent.type, "template");
        assert.deepEqual(sent.template, {
          name: "seasonal_promotion",
          language: { code: "en_US" },
          components: [
            { type: "header", parameters: [{ type: "text", text: "Winter Sale" }] },
            {
              type: "body",
              parameters: [
                { type: "text", text: "the end of March" },
                { type: "text", text: "WINTER25" },
                { type: "text", text: "30%" },
              ],
            },
            {
              type: "button",
              sub_type: "url",
              index: "1",
              parameters: [{ type: "text", text: "winter2027" }],
            },
          ],
        });
        const content =
          "Shop now through the end of March and use code WINTER25 to get 30% off of all merchandise.";
        const [stored] = await storedTemplates();
        assert.equal(stored.content, content);
        assert.deepEqual(stored.template, { name: "seasonal_promotion", language: "en_US" });
        await form.getByText("seasonal_promotion sent.").waitFor();
        const shown = message(content);
        await shown.getByText("Template seasonal_promotion (en_US)").waitFor();
        assert.equal(await picker.inputValue(), "", "the form starts again");
      },
    );

    await t.step("a NAMED template takes its values by name", async () => {
      await picker.selectOption({ label: "order_confirmation (en_US)" });
      await slot("{{first_name}}").fill("Sheena");
      await slot("{{order_number}}").fill("860198-230332");
      await form.getByLabel("Preview").getByText(
        "Thank you, Sheena! Your order number is 860198-230332.",
      )
        .waitFor();
      await form.getByRole("button", { name: "Send template" }).click();
      await waitForSends(5);
      assert.deepEqual(JSON.parse(sends[4].body).template.components, [{
        type: "body",
        parameters: [
          { type: "text", parameter_name: "first_name", text: "Sheena" },
          { type: "text", parameter_name: "order_number", text: "860198-230332" },
        ],
      }]);
      await message("Thank you, Sheena! Your order number is 860198-230332.").waitFor();
      assert.deepEqual((await storedTemplates()).map((m) => m.content), [
        "Shop now through the end of March and use code WINTER25 to get 30% off of all merchandise.",
        "Thank you, Sheena! Your order number is 860198-230332.",
      ]);
    });

    await t.step(
      "on a phone the window, the states, the reasons and the template form fit the width",
      async () => {
        await page.setViewportSize(PHONE);
        await message("Ainda aí?").getByText("failed", { exact: true }).waitFor();
        await picker.selectOption({ label: "seasonal_promotion (en_US)" });
        await slot("Button “Shop now”: end of its link").waitFor();
        await assertFitsWidth(page, "the conversation");
      },
    );

    await t.step("an agent's reminder template: an approved one with its parameters, then none", async () => {
      // Still on the phone's width.
      await page.goto(`/#/agents/${agent.id}`);
      const settings = page.getByRole("form", { name: "Settings" });
      const reminder = settings.getByLabel("Template");
      await reminder.waitFor();
      assert.deepEqual(await reminder.locator("option").allTextContents(), [
        "None",
        "seasonal_promotion (en_US)",
        "order_confirmation (en_US)",
      ]);
      assert.equal(await reminder.inputValue(), "");
      await reminder.selectOption({ label: "order_confirmation (en_US)" });
      await settings.getByLabel("{{first_name}}", { exact: true }).fill("there");
      await settings.getByLabel("{{order_number}}", { exact: true }).fill("still open");
      await settings.getByRole("button", { name: "Save settings" }).click();
      await settings.getByText("Settings saved.").waitFor();
      const stored = (await owner.client.get(`/api/agents/${agent.id}`)).body;
      assert.deepEqual(stored.reminderTemplate, {
        name: "order_confirmation",
        language: "en_US",
        parameters: { body: { first_name: "there", order_number: "still open" } },
      });
      // Read again (another screen and back): the stored choice and its values are shown.
      await page.goto("/#/agents");
      await page.getByRole("heading", { name: "Agents" }).waitFor();
      await page.goto(`/#/agents/${agent.id}`);
      await settings.getByLabel("{{order_number}}", { exact: true }).waitFor();
      assert.equal(await settings.getByLabel("{{order_number}}", { exact: true }).inputValue(), "still open");
      // Saving the other settings keeps it (the form replaces the agent whole).
      await settings.getByLabel("Job name").fill("Acme Tea");
      await settings.getByRole("button", { name: "Save settings" }).click();
      await settings.getByText("Settings saved.").waitFor();
      const resaved = (await owner.client.get(`/api/agents/${agent.id}`)).body;
      assert.equal(resaved.jobName, "Acme Tea");
      assert.deepEqual(resaved.reminderTemplate, stored.reminderTemplate);
      // Meta pauses it: no longer listed, shown as such, and kept as it was by a save.
      await db.whatsAppTemplate.updateMany({
        where: { channelId: channel.id, name: "order_confirmation" },
        data: { status: "PAUSED" },
      });
      await page.goto("/#/agents");
      await page.getByRole("heading", { name: "Agents" }).waitFor();
      await page.goto(`/#/agents/${agent.id}`);
      await settings.getByText("order_confirmation (en_US) is no longer an approved template.").waitFor();
      assert.deepEqual(await reminder.locator("option").allTextContents(), [
        "None",
        "seasonal_promotion (en_US)",
        "order_confirmation (en_US), not approved",
      ]);
      await settings.getByRole("button", { name: "Save settings" }).click();
      await settings.getByText("Settings saved.").waitFor();
      assert.deepEqual(
        (await owner.client.get(`/api/agents/${agent.id}`)).body.reminderTemplate,
        stored.reminderTemplate,
      );
      await assertFitsWidth(page, "the agent's settings");
      await reminder.selectOption({ label: "None" });
      await settings.getByRole("button", { name: "Save settings" }).click();
      await settings.getByText("Settings saved.").waitFor();
      assert.equal((await owner.client.get(`/api/agents/${agent.id}`)).body.reminderTemplate, null);
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

/**
 * Leaves the conversation for its list and opens it again (a hash change: the same page, signed
 * in), and waits for its feeds: the list's one alone, then the conversation's two.
 */
async function reopen(page: Page, app: App, conversationId: string) {
  await page.getByRole("link", { name: "← Conversations" }).click();
  await page.getByRole("heading", { name: "Conversations" }).waitFor();
  await liveFeeds(app, 1);
  await page.goto(`/#/conversation/${conversationId}`);
  await liveFeeds(app, 2);
}
