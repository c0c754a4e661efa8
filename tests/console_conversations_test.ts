/**
 * The console's conversations in a browser: a customer's signed WhatsApp post through the
 * stand-ins appears live in the list and in the open conversation; "Take over", a "Reply" that
 * reaches the Graph stand-in, "Release", "Close"; a voice note shown with its transcript; and
 * markup written by a customer shown as text, never run.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { consoleSuite, emptied, liveFeeds, PHONE, screenshot, signIn } from "./_helpers/browser.ts";
import { startAi, startMediaGraph } from "./_helpers/media.ts";
import { createWhatsAppChannel, customerMessage, postSigned, textMessage } from "./_helpers/whatsapp.ts";
import { waitUntil } from "./_helpers/conversations.ts";

const MARKUP = "<img src=x onerror=alert(1)>";

Deno.test("a conversation arrives live, is taken over, answered, released and closed from the console", async (t) => {
  const graph = startMediaGraph();
  const ai = startAi(() => "unused");
  const suite = await consoleSuite({
    WHATSAPP_GRAPH_URL: graph.url,
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: ai.baseUrl,
  });
  try {
    const { owner } = await suite.t.seed.workspace();
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, owner);
    await page.getByText("No conversations yet").waitFor();
    // The list's feed (conversationEvents) is up before the customer writes.
    await liveFeeds(suite.t.app, 1);

    await t.step("a customer's WhatsApp message appears in the list without a reload", async () => {
      const posted = await postSigned(
        suite.t.anon,
        channel.id,
        textMessage(channel.phoneNumberId, "wamid.c1", "Hi there"),
      );
      assert.equal(posted.status, 200);
      const row = page.getByRole("link", { name: /Sheena Nelson/ });
      await row.waitFor();
      await row.getByText("Hi there").waitFor();
      await row.getByText("OPEN").waitFor();
      await screenshot(page, "conversations");
      await row.click();
      await page.getByRole("heading", { name: /Sheena Nelson/ }).waitFor();
      await page.getByRole("list", { name: "Messages" }).getByText("Hi there").waitFor();
      // The conversation's feeds (messageAdded, its status) have replaced the list's.
      await liveFeeds(suite.t.app, 2);
    });

    await t.step("a new message arrives live in the open conversation, markup shown as text", async () => {
      await postSigned(suite.t.anon, channel.id, textMessage(channel.phoneNumberId, "wamid.c2", MARKUP));
      const messages = page.getByRole("list", { name: "Messages" });
      await messages.getByText(MARKUP, { exact: true }).waitFor();
      assert.equal(await messages.locator("img").count(), 0);
    });

    await t.step("take over, reply (sent through the Graph stand-in), release and close", async () => {
      assert.equal(await page.getByLabel("Reply").count(), 0);
      await page.getByRole("button", { name: "Take over" }).click();
      await page.getByRole("heading", { name: /HUMAN/ }).waitFor();
      await page.getByLabel("Reply").fill("Hello Sheena, Maria here.");
      await page.getByRole("button", { name: "Send" }).click();
      await graph.waitForSends(1);
      assert.equal(graph.sends[0].text.body, "Hello Sheena, Maria here.");
      await page.getByRole("list", { name: "Messages" }).getByText("Hello Sheena, Maria here.").waitFor();
      // Emptied once the send is answered (the live feed may show the message before that).
      await emptied(page.getByLabel("Reply"));
      await screenshot(page, "conversation");
      await page.getByRole("button", { name: "Release" }).click();
      await page.getByRole("heading", { name: /OPEN/ }).waitFor();
      assert.equal(await page.getByLabel("Reply").count(), 0);
      await page.getByRole("button", { name: "Close" }).click();
      // "Close" asks first.
      await page.getByRole("button", { name: "Close conversation" }).click();
      await page.getByRole("heading", { name: /CLOSED/ }).waitFor();
      assert.equal(await page.getByRole("button", { name: "Take over" }).count(), 0);
    });

    await t.step("a voice note shows its transcript and the file through the media endpoint", async () => {
      const audio = new TextEncoder().encode("voice-1");
      graph.files.set("audio-1", { bytes: audio, mimeType: "audio/ogg; codecs=opus" });
      ai.transcripts.set("voice-1", "I would like to book for Friday");
      const sha256 = createHash("sha256").update(audio).digest("hex");
      await postSigned(
        suite.t.anon,
        channel.id,
        customerMessage(channel.phoneNumberId, "wamid.c3", "audio", {
          id: "audio-1",
          mime_type: "audio/ogg; codecs=opus",
          sha256,
          voice: true,
        }),
      );
      const stored = await waitUntil(
        () => suite.t.app.deps.db.message.findFirst({ where: { externalId: "wamid.c3" } }),
        (m) => m !== null && !m.mediaPending,
      );
      // A hash change: the same page, still signed in.
      await page.goto(`/#/conversation/${stored!.conversationId}`);
      // In the conversation's messages (the list beside it previews the transcript too).
      await page.getByRole("list", { name: "Messages" }).getByText("I would like to book for Friday")
        .waitFor();
      await page.locator("audio[src*='/media?expires=']").waitFor({ state: "attached" });
    });

    await t.step("the list follows status changes made elsewhere, and filters by status", async () => {
      await page.getByRole("link", { name: "← Conversations" }).click();
      const open = page.getByRole("link", { name: /Sheena Nelson/ }).filter({ hasText: "OPEN" });
      await open.waitFor();
      // The list's feed has replaced the conversation's two before the change is made elsewhere.
      await liveFeeds(suite.t.app, 1);
      const conversationId = (await open.getAttribute("href"))!.split("/").at(-1)!;
      const taken = await owner.client.post(`/api/conversations/${conversationId}/takeover`);
      assert.equal(taken.status, 200);
      await page.getByRole("link", { name: /Sheena Nelson/ }).filter({ hasText: "HUMAN" }).waitFor();
      await page.getByLabel("Status").selectOption("CLOSED");
      await page.getByRole("link", { name: /Sheena Nelson/ }).filter({ hasText: "CLOSED" }).waitFor();
      await page.getByRole("link", { name: /Sheena Nelson/ }).filter({ hasText: "HUMAN" }).waitFor({
        state: "detached",
      });
      assert.equal(await page.getByRole("link", { name: /Sheena Nelson/ }).count(), 1);
      await page.goto(`/#/conversation/${conversationId}`);
    });

    await t.step("on a phone the conversation and its controls fit the width", async () => {
      await page.setViewportSize(PHONE);
      await page.getByRole("button", { name: "Release" }).waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= PHONE.width, `the page is ${width}px wide`);
      await screenshot(page, "conversation-phone");
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
    await graph.close();
    await ai.close();
  }
});
