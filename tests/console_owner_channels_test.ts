/**
 * The owner's channel and webhook screens in Chromium. A WhatsApp number's credentials are written
 * once and work (Meta's handshake with the verify token shown, a post signed with the app secret),
 * the page never shows them again and says when the handshake was seen; an API channel's example
 * call is run as shown; a channel is deleted after a question. Event webhooks are created for two
 * events (one per event, each secret shown once and verifying the calls), "Send test" reaches the
 * receiver, a failing receiver's delivery log shows every attempt, and "Redeliver" delivers it.
 * Each effect is read back through the API; each screen also at a phone's width.
 */
import assert from "node:assert/strict";
import {
  assertFitsWidth,
  consoleSuite,
  PHONE,
  screenshot,
  signIn,
  unlabelledControls,
} from "./_helpers/browser.ts";
import { startReceiver, verifyStandardWebhook } from "./_helpers/receiver.ts";
import { postSigned, textMessage } from "./_helpers/whatsapp.ts";

Deno.test("an owner connects WhatsApp and API channels and event webhooks from the console", async (t) => {
  const suite = await consoleSuite();
  let failing = true;
  const receiver = startReceiver((call) =>
    call.path === "/flaky" && failing ? new Response("down", { status: 503 }) : new Response("ok")
  );
  try {
    const { workspaceId, owner } = await suite.t.seed.workspace("Acme");
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const { page, refused, incidents, close } = await suite.open(`/#/agents/${agent.id}/channels`);
    await signIn(page, owner);
    await page.getByText("No channels yet.").waitFor();
    const listed = async () => (await owner.client.get(`/api/agents/${agent.id}/channels`)).body.data;
    const secrets = { accessToken: "EAAG-page-access-token", appSecret: "page-app-secret-123" };
    let whatsappId = "";
    let verifyToken = "";

    await t.step(
      "a WhatsApp number: its credentials written once, the callback URL and verify token to paste",
      async () => {
        await page.getByRole("button", { name: "New WhatsApp number" }).click();
        const form = page.getByRole("form", { name: "New WhatsApp number" });
        await form.getByLabel("Label").fill("Main number");
        await form.getByLabel("Phone number ID").fill("106540352242922");
        await form.getByLabel("Access token").fill(secrets.accessToken);
        await form.getByLabel("App secret").fill(secrets.appSecret);
        // A verify token is proposed; the owner may keep it.
        verifyToken = await form.getByLabel("Verify token", { exact: true }).inputValue();
        assert.match(verifyToken, /^[A-Za-z0-9_-]{24}$/);
        await form.getByRole("button", { name: "Add WhatsApp number" }).click();
        const card = page.getByRole("listitem", { name: "Main number" });
        await card.getByLabel("Verify token", { exact: true }).waitFor();
        const [channel, ...others] = await listed();
        assert.deepEqual(others, []);
        whatsappId = channel.id;
        assert.equal(channel.type, "WHATSAPP");
        assert.equal(channel.phoneNumberId, "106540352242922");
        assert.equal(channel.verifiedAt, null);
        assert.equal(await card.getByLabel("Verify token", { exact: true }).inputValue(), verifyToken);
        assert.equal(
          await card.getByLabel("Callback URL", { exact: true }).inputValue(),
          `http://switchboard.test/webhooks/whatsapp/${whatsappId}`,
        );
        await card.getByText("Meta's verify handshake has not been seen yet.").waitFor();
        await card.getByText("set (never shown)").waitFor();
        // The secrets were stored as written.
        const stored = await suite.t.app.deps.channels.fresh(whatsappId);
        assert.deepEqual(stored?.secrets, { ...secrets, verifyToken });
        await screenshot(page, "channel-whatsapp");
      },
    );

    await t.step(
      "Meta's handshake with that token passes and shows; a post signed with the app secret is taken",
      async () => {
        const handshake = await suite.t.anon.get(
          `/webhooks/whatsapp/${whatsappId}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=8421`,
        );
        assert.equal(handshake.status, 200);
        assert.equal(handshake.body, 8421);
        const post = await postSigned(
          suite.t.anon,
          whatsappId,
          textMessage("106540352242922", "5511999990000", "Hello"),
          secrets.appSecret,
        );
        assert.equal(post.status, 200);
        const card = page.getByRole("listitem", { name: "Main number" });
        await card.getByRole("button", { name: "Check again" }).click();
        await card.getByText("Meta's verify handshake passed").waitFor();
        // Read again from the server (another visit): the verify token is no longer shown, no secret is.
        await page.reload();
        await signIn(page, owner);
        await card.getByText("Meta's verify handshake passed").waitFor();
        assert.equal(await card.getByLabel("Verify token", { exact: true }).count(), 0);
        const html = await page.content();
        for (const secret of [secrets.accessToken, secrets.appSecret, verifyToken]) {
          assert.equal(html.includes(secret), false, "a secret is on the page");
        }
      },
    );

    await t.step("Replace credentials writes only what is filled in", async () => {
      const card = page.getByRole("listitem", { name: "Main number" });
      await card.getByRole("button", { name: "Replace credentials" }).click();
      await card.getByLabel("New verify token").fill("a-new-verify-token");
      await card.getByRole("button", { name: "Replace", exact: true }).click();
      await card.getByText("Credentials replaced.").waitFor();
      const stored = await suite.t.app.deps.channels.fresh(whatsappId);
      assert.deepEqual(stored?.secrets, { ...secrets, verifyToken: "a-new-verify-token" });
      await card.getByRole("button", { name: "Done" }).click();
    });

    await t.step("an API channel shows its endpoint and an example call that works as shown", async () => {
      await page.getByRole("button", { name: "New API channel" }).click();
      await page.getByRole("form", { name: "New API channel" }).getByLabel("Label").fill("Website");
      await page.getByRole("button", { name: "Add API channel" }).click();
      const card = page.getByRole("listitem", { name: "Website" });
      await card.getByLabel("Endpoint", { exact: true }).waitFor();
      const api = (await listed()).find((c: { type: string }) => c.type === "API");
      const endpoint = `http://switchboard.test/api/channels/${api.id}/messages`;
      assert.equal(await card.getByLabel("Endpoint", { exact: true }).inputValue(), endpoint);
      const example = await card.getByLabel("Example call").innerText();
      assert.ok(example.startsWith(`curl -X POST '${endpoint}'`), example);
      assert.ok(example.includes(`x-workspace-id: ${workspaceId}`), example);
      // The call as shown, with an API token in $SWITCHBOARD_TOKEN, stores the customer's message.
      const token = (await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "site" }))
        .body.token;
      const body = example.match(/-d '(.*)'$/)![1];
      const res = await fetch(`${suite.baseUrl}${new URL(endpoint).pathname}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "x-workspace-id": workspaceId,
          "content-type": "application/json",
        },
        body,
      });
      assert.equal(res.status, 201, await res.clone().text());
      assert.equal((await res.json()).content, "Hello!");
      await screenshot(page, "channels");
    });

    await t.step("the channels fit a phone, every field labelled", async () => {
      const phone = await suite.open(`/#/agents/${agent.id}/channels`, PHONE);
      await signIn(phone.page, owner);
      await phone.page.getByRole("listitem", { name: "Website" }).getByLabel("Example call").waitFor();
      await assertFitsWidth(phone.page, "channels");
      await phone.page.getByRole("button", { name: "New WhatsApp number" }).click();
      await assertFitsWidth(phone.page, "a new WhatsApp number");
      assert.deepEqual(await unlabelledControls(phone.page), []);
      await screenshot(phone.page, "channels-phone");
      await phone.close();
    });

    await t.step("a channel is deleted after a question", async () => {
      const card = page.getByRole("listitem", { name: "Website" });
      await card.getByRole("button", { name: "Delete channel" }).click();
      await page.getByText("Delete Website with its conversations and messages?").waitFor();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete channel" }).click();
      await card.waitFor({ state: "detached" });
      assert.deepEqual((await listed()).map((c: { id: string }) => c.id), [whatsappId]);
    });

    const webhooks = async () => (await owner.client.get(`/api/agents/${agent.id}/webhooks`)).body.data;
    /** Creates webhooks through the form and answers the signing secrets shown, by event. */
    const create = async (url: string, events: string[], headers = "") => {
      await page.getByRole("button", { name: "New webhook" }).click();
      const form = page.getByRole("form", { name: "New webhook" });
      await form.getByLabel("URL").fill(url);
      if (headers) await form.getByLabel("Headers").fill(headers);
      for (const e of events) await form.getByLabel(e).check();
      await form.getByRole("button", { name: "Create webhook" }).click();
      const shown: Record<string, string> = {};
      for (const e of events) {
        const label = events.length > 1 ? `Signing secret (${e})` : "Signing secret";
        shown[e] = await page.getByLabel(label, { exact: true }).inputValue();
      }
      return shown;
    };

    await t.step(
      "webhooks for two events: each with its secret shown once, verifying its calls",
      async () => {
        await page.getByRole("navigation", { name: "Agent" }).getByRole("link", { name: "Webhooks" }).click();
        await page.getByText("No webhooks yet.").waitFor();
        const shown = await create(
          receiver.url("/events"),
          ["message.received", "conversation.closed"],
          "X-Team: support",
        );
        const made = await webhooks();
        assert.deepEqual(made.map((w: { event: string }) => w.event).sort(), [
          "conversation.closed",
          "message.received",
        ]);
        for (const w of made) {
          assert.equal(w.url, receiver.url("/events"));
          assert.equal(w.method, "POST");
          assert.deepEqual(w.headers, { "X-Team": "support" });
          assert.match(shown[w.event], /^whsec_/);
        }
        assert.notEqual(shown["message.received"], shown["conversation.closed"]);
        await screenshot(page, "webhook-secret");
        await page.getByRole("button", { name: "I have kept it" }).click();
        assert.equal(await page.getByLabel("Signing secret (message.received)").count(), 0);

        const card = page.getByRole("listitem", { name: /^message\.received/ });
        await card.getByRole("button", { name: "Send test" }).click();
        const [call] = await receiver.waitForCalls(1);
        assert.equal(call.headers.get("x-team"), "support");
        assert.equal(JSON.parse(call.body).event, "webhook.test");
        assert.equal(await verifyStandardWebhook(shown["message.received"], call.headers, call.body), true);
        const delivery = card.getByRole("listitem", { name: "webhook.test delivery" });
        await delivery.getByText("SUCCEEDED").waitFor();
        await delivery.getByText("1 attempt", { exact: true }).waitFor();
        await delivery.getByRole("cell", { name: "200", exact: true }).waitFor();
      },
    );

    await t.step(
      "a failing receiver: every attempt in the log, the last failure, then Redeliver",
      async () => {
        await create(receiver.url("/flaky"), ["message.sent"]);
        const card = page.getByRole("listitem", { name: /^message\.sent/ });
        await card.getByRole("button", { name: "Send test" }).click();
        const delivery = card.getByRole("listitem", { name: "webhook.test delivery" });
        // Three attempts, 1 s and 4 s apart: the page reads the log again while it is PENDING.
        await delivery.getByText("FAILED").waitFor({ timeout: 30_000 });
        assert.deepEqual(await delivery.locator("tbody tr td:nth-child(3)").allInnerTexts(), [
          "503",
          "503",
          "503",
        ]);
        await card.getByText("Last failure").waitFor();
        const [hook] = (await webhooks()).filter((w: { event: string }) => w.event === "message.sent");
        assert.equal(hook.lastError.status, 503);
        await delivery.scrollIntoViewIfNeeded();
        await screenshot(page, "webhooks");
        failing = false;
        await delivery.getByRole("button", { name: "Redeliver" }).click();
        await delivery.getByText("SUCCEEDED").waitFor();
        await delivery.getByText("4 attempts").waitFor();
        const log =
          (await owner.client.get(`/api/agents/${agent.id}/webhooks/${hook.id}/deliveries`)).body.data;
        assert.equal(log.length, 1);
        assert.equal(log[0].status, "SUCCEEDED");
        assert.deepEqual(log[0].attempts.map((a: { httpStatus: number }) => a.httpStatus), [
          503,
          503,
          503,
          200,
        ]);
      },
    );

    await t.step("the webhooks fit a phone, every field labelled", async () => {
      const phone = await suite.open(`/#/agents/${agent.id}/webhooks`, PHONE);
      await signIn(phone.page, owner);
      await phone.page.getByRole("listitem", { name: /^message\.sent/ }).getByText("SUCCEEDED").waitFor();
      await assertFitsWidth(phone.page, "webhooks");
      await phone.page.getByRole("button", { name: "New webhook" }).click();
      await assertFitsWidth(phone.page, "a new webhook");
      assert.deepEqual(await unlabelledControls(phone.page), []);
      await screenshot(phone.page, "webhooks-phone");
      await phone.close();
    });

    await t.step("a webhook is deleted after a question", async () => {
      const card = page.getByRole("listitem", { name: /^conversation\.closed/ });
      await card.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete webhook" }).click();
      await card.waitFor({ state: "detached" });
      assert.deepEqual((await webhooks()).map((w: { event: string }) => w.event).sort(), [
        "message.received",
        "message.sent",
      ]);
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await receiver.close();
    await suite.close();
  }
});
