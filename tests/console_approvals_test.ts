/**
 * Approvals and the supervisor in the console: the supervisor chat ("Message", "Send") with each
 * answer's credits and proposals; an approval arriving live with its prompt diff by line, approved
 * from the page (its effect read over REST); a rejection; and the reasons an approval cannot be
 * decided: stale (its target changed), decided elsewhere while on the screen, or expired (the app's
 * clock moved past its expiry: refused when decided, then marked by the sweep, live). Each says who
 * asked, with a link to the supervisor's answer; changes that are not text show labelled fields,
 * never JSON; a prompt gaining a line keeps its unchanged lines unchanged (its final newline
 * aside); a rejection may carry a comment, shown on the approval and stored.
 */
import assert from "node:assert/strict";
import { consoleSuite, emptied, liveFeeds, screenshot, signIn } from "./_helpers/browser.ts";
import {
  FORMAL_PROMPT as FORMAL,
  FORMAL_RATIONALE,
  PROPOSED_REPLY,
  startWalkThroughModel,
} from "./_helpers/supervisor_model.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";
import { expireApprovals } from "../src/approvals/expiry.ts";
import { eventually } from "./_helpers/receiver.ts";
import type { Request } from "playwright-core";

Deno.test("the supervisor proposes, approvals arrive live with their diff, and are approved, rejected or refused", async (t) => {
  const model = startWalkThroughModel();
  // The app's time: the wall clock, moved a day on by the expiry steps. No workers, so the expiry
  // sweep runs only when the test runs it.
  const clock = { ahead: 0, now: () => new Date(Date.now() + clock.ahead) };
  const suite = await consoleSuite(
    { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl },
    { clock, workers: false },
  );
  try {
    const { workspaceId, owner } = await suite.t.seed.workspace("Acme");
    const manager = await suite.t.seed.member(workspaceId, "MANAGER");
    const agentId = (await suite.t.seed.agent(owner.client, { name: "Ana" })).id;
    const hook = await owner.client.post(`/api/agents/${agentId}/webhooks`, {
      event: "message.sent",
      url: "https://example.com/hook",
    });
    assert.equal(hook.status, 201);
    const promptBefore: string = (await manager.client.get(`/api/agents/${agentId}`)).body.systemPrompt;
    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, manager);

    await t.step("an approval arrives live with a line diff of the prompt and is approved", async () => {
      await page.getByRole("link", { name: "Approvals" }).click();
      await page.getByText("Nothing waits for a decision").waitFor();
      // approvalEvents is up (and the conversation list's feed gone) before the supervisor proposes.
      await liveFeeds(suite.t.app, 1);
      const asked = await manager.client.post("/api/supervisor/chat", {
        message: "Make Ana more formal, please.",
      });
      assert.equal(asked.status, 200, JSON.stringify(asked.body));
      const card = page.getByRole("article", { name: "Change the agent's prompt for Ana" });
      await card.waitFor();
      await card.getByText(FORMAL_RATIONALE).waitFor();
      // The diff: the old prompt's lines removed, the new line added.
      const added = card.locator(".diff .added");
      assert.deepEqual(await added.allTextContents(), [FORMAL]);
      const removed = await card.locator(".diff .removed").allTextContents();
      assert.deepEqual(removed, promptBefore.split("\n").map((l) => l || " "));
      // Who asked, and where: the manager, and the supervisor's answer that proposed it.
      const proposed = (await manager.client.get("/api/approvals?status=PENDING")).body.data[0];
      const me = (await manager.client.get("/api/auth/me")).body.user;
      assert.equal(proposed.requestedBy.id, manager.userId);
      await card.getByText(`Asked by ${me.name} (${me.email})`).waitFor();
      const link = card.getByRole("link", { name: "See where it was asked" });
      assert.equal(await link.getAttribute("href"), `#/supervisor/${proposed.supervisorMessageId}`);
      await screenshot(page, "approvals");
      await card.getByRole("button", { name: "Approve" }).click();
      await card.getByText("Approved: the change was made.").waitFor();
      assert.equal(await card.getByRole("button", { name: "Approve" }).count(), 0);
      const agent = await manager.client.get(`/api/agents/${agentId}`);
      assert.equal(agent.body.systemPrompt, FORMAL);
      // The link opens the supervisor conversation at that answer.
      await link.click();
      const answer = page.locator(`#turn-${proposed.supervisorMessageId}`);
      await answer.getByText(PROPOSED_REPLY).waitFor();
      assert.equal(await answer.getAttribute("aria-current"), "true");
      assert.equal(
        await page.evaluate(() => document.activeElement?.id),
        `turn-${proposed.supervisorMessageId}`,
      );
    });

    await t.step(
      "the supervisor chat shows each answer's credits and proposals; a rejection changes nothing",
      async () => {
        await page.getByRole("link", { name: "Supervisor" }).click();
        // The earlier turn (asked over REST) is in the workspace's conversation.
        await page.getByText("Make Ana more formal, please.").waitFor();
        await page.getByLabel("Message").fill("Remove the webhook of Ana.");
        await page.getByRole("button", { name: "Send" }).click();
        const answer = page.getByRole("article", { name: "Supervisor answer" }).last();
        await answer.getByRole("link", { name: "Delete a webhook" }).waitFor();
        await answer.getByText(PROPOSED_REPLY).waitFor();
        assert.match(await answer.locator(".credits").textContent() ?? "", /^[\d.]+ credits$/);
        await emptied(page.getByLabel("Message"));
        await screenshot(page, "supervisor");
        await answer.getByRole("link", { name: "Delete a webhook" }).click();
        const card = page.getByRole("article", { name: "Delete a webhook for Ana" });
        // What it deletes, field by field, never as JSON.
        await card.getByText("Deletes:").waitFor();
        assert.equal(
          await card.getByRole("group", { name: "Event" }).locator("dd").textContent(),
          "message.sent",
        );
        assert.equal(
          await card.getByRole("group", { name: "URL" }).locator("dd").textContent(),
          "https://example.com/hook",
        );
        assert.doesNotMatch(await card.locator(".change").textContent() ?? "", /[{}"]/);
        await card.getByRole("button", { name: "Reject" }).click();
        await card.getByText("Rejected: nothing was changed.").waitFor();
        const hooks = await manager.client.get(`/api/agents/${agentId}/webhooks`);
        assert.deepEqual(hooks.body.data.map((h: { id: string }) => h.id), [hook.body.id]);
      },
    );

    await t.step(
      "a prompt gaining a line: its old lines stay unchanged, whatever their final newline",
      async () => {
        const current: string = (await manager.client.get(`/api/agents/${agentId}`)).body.systemPrompt;
        assert.ok(!current.endsWith("\n"));
        const ctx = await actorOf(suite.t.app, manager.token, workspaceId);
        const id = await newApproval(ctx, agentId, {
          tool: "update_agent_prompt",
          target: { agentId },
          change: { systemPrompt: `${current}\nEnd each answer with a thank you.\n` },
        });
        const card = page.getByRole("article", { name: "Change the agent's prompt for Ana" }).filter({
          hasText: "End each answer with a thank you.",
        });
        await page.getByRole("link", { name: "Approvals" }).click();
        await card.waitFor();
        assert.deepEqual(await card.locator(".diff .added").allTextContents(), [
          "End each answer with a thank you.",
        ]);
        assert.deepEqual(await card.locator(".diff .removed").allTextContents(), []);
        assert.deepEqual(
          await card.locator(".diff .same").allTextContents(),
          current.split("\n").map((l) => l || " "),
        );
        // Rejected with a comment: shown on the approval, and stored.
        await card.getByLabel("Comment if you reject (optional)").fill("Not before the holidays.");
        await card.getByRole("button", { name: "Reject" }).click();
        await card.getByText("Rejected: nothing was changed.").waitFor();
        await card.getByText("Not before the holidays.").waitFor();
        assert.equal(await card.getByRole("textbox").count(), 0);
        const stored = (await manager.client.get(`/api/approvals/${id}`)).body;
        assert.equal(stored.status, "REJECTED");
        assert.equal(stored.comment, "Not before the holidays.");
      },
    );

    await t.step(
      "an intent's change shows its fields as words: lists, required fields, before and after",
      async () => {
        const intent = await owner.client.post(`/api/agents/${agentId}/intents`, {
          name: "Book Visit",
          description: "When they want a visit",
          triggerOnTypes: ["TEXT"],
          requiredFields: [],
          webhookUrl: "https://example.com/i",
        });
        assert.equal(intent.status, 201, JSON.stringify(intent.body));
        const ctx = await actorOf(suite.t.app, manager.token, workspaceId);
        const id = await newApproval(ctx, agentId, {
          tool: "update_intent",
          target: { intentId: intent.body.id },
          change: {
            triggerOnTypes: ["TEXT", "AUDIO"],
            requiredFields: [{ name: "date", type: "string", description: "The day of the visit" }],
          },
        });
        const card = page.getByRole("article", { name: "Change an intent for Ana" });
        await card.waitFor();
        const name = card.getByRole("group", { name: "Name" });
        assert.equal(await name.locator("dd").textContent(), "Book Visit (unchanged)");
        const triggers = card.getByRole("group", { name: "Triggered by" });
        assert.deepEqual(await triggers.locator("dd.was li").allTextContents(), ["TEXT"]);
        assert.deepEqual(await triggers.locator("dd.is li").allTextContents(), ["TEXT", "AUDIO"]);
        const required = card.getByRole("group", { name: "Required fields" });
        assert.equal(await required.locator("dd.was").textContent(), "Before none");
        assert.deepEqual(await required.locator("dd.is li").allTextContents(), [
          "date (string): The day of the visit",
        ]);
        // Only what changes, and the name saying which intent.
        assert.equal(await card.locator(".change-field").count(), 3);
        assert.doesNotMatch(await card.locator("dl.change-fields").textContent() ?? "", /[{}"]/);
        await card.scrollIntoViewIfNeeded();
        await screenshot(page, "approval-fields");
        await card.getByRole("button", { name: "Reject" }).click();
        await card.getByText("Rejected: nothing was changed.").waitFor();
        assert.equal((await manager.client.get(`/api/approvals/${id}`)).body.comment, null);
      },
    );

    await t.step("a stale approval says why it could not be approved, and stays pending", async () => {
      const ctx = await actorOf(suite.t.app, manager.token, workspaceId);
      const id = await newApproval(ctx, agentId, {
        tool: "update_agent_prompt",
        target: { agentId },
        change: { systemPrompt: "Be brief." },
      });
      const card = page.getByRole("article", { name: "Change the agent's prompt for Ana" }).filter({
        hasText: "Be brief.",
      });
      await card.waitFor();
      const edited = await owner.client.put(`/api/agents/${agentId}/prompt`, {
        systemPrompt: "Edited by hand meanwhile.",
        rationale: "a manual edit",
      });
      assert.equal(edited.status, 200, JSON.stringify(edited.body));
      await card.getByRole("button", { name: "Approve" }).click();
      await card.getByRole("alert").filter({ hasText: /^Stale: / }).waitFor();
      const approval = await manager.client.get(`/api/approvals/${id}`);
      assert.equal(approval.body.status, "PENDING");
    });

    await t.step(
      "an approval decided elsewhere shows its outcome at once, without buttons, whatever an older read says",
      async () => {
        // The list's read again on the CREATED event is answered only after the rejection's event:
        // read before the rejection (PENDING), it is older and must not bring the buttons back.
        // urql sends a query as a GET (its name in the URL), a mutation as a POST.
        const isListRead = (r: Request) => r.url().includes("ConsolePendingApprovals");
        let read = false, release!: () => void;
        const released = new Promise<void>((r) => release = r);
        const graphql = (url: URL) => url.pathname === "/graphql";
        await page.route(graphql, async (route) => {
          if (!isListRead(route.request())) return route.fallback();
          const response = await route.fetch();
          read = true;
          await released;
          await route.fulfill({ response });
        });
        const ctx = await actorOf(suite.t.app, manager.token, workspaceId);
        const id = await newApproval(ctx, agentId);
        const card = page.getByRole("article", { name: "Change the agent's training context for Ana" });
        await card.getByRole("button", { name: "Reject" }).waitFor();
        // Read (PENDING) before the rejection.
        await eventually(() => Promise.resolve(read || undefined));
        const rejected = await owner.client.post(`/api/approvals/${id}/reject`);
        assert.equal(rejected.status, 200);
        await card.getByText("Rejected: nothing was changed.").waitFor();
        const answered = page.waitForEvent("requestfinished", isListRead);
        release();
        await answered;
        await page.unroute(graphql);
        // Its answer handled and rendered: two frames after the response's body was read.
        await page.evaluate(() =>
          new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null))))
        );
        await card.getByText("Rejected: nothing was changed.").waitFor();
        assert.equal(await card.getByRole("button").count(), 0);
      },
    );

    const training = (text: string) => ({
      tool: "update_agent_training",
      target: { agentId },
      change: { trainingContext: text },
    });
    const trainingCard = (text: string) =>
      page.getByRole("article", { name: "Change the agent's training context for Ana" }).filter({
        hasText: text,
      });
    const late = trainingCard("We sell green tea.");
    const waiting = trainingCard("We sell black tea.");
    let lateId = "", waitingId = "";

    await t.step(
      "an approval past its expiry is refused as expired and offers no decision any more",
      async () => {
        const ctx = await actorOf(suite.t.app, manager.token, workspaceId);
        lateId = await newApproval(ctx, agentId, training("We sell green tea."));
        waitingId = await newApproval(ctx, agentId, training("We sell black tea."));
        await late.getByRole("button", { name: "Approve" }).waitFor();
        await waiting.getByRole("button", { name: "Approve" }).waitFor();
        // A day on: past their expiry, which the sweep has not marked yet.
        clock.ahead = 24 * 3600_000;
        await late.getByRole("button", { name: "Approve" }).click();
        await late.getByRole("alert").filter({
          hasText:
            "Already decided or expired: The approval has expired; only a PENDING approval can be approved.",
        }).waitFor();
        assert.equal(await late.getByRole("button").count(), 0);
        assert.equal((await manager.client.get(`/api/approvals/${lateId}`)).body.status, "PENDING");
        const agent = await manager.client.get(`/api/agents/${agentId}`);
        assert.notEqual(agent.body.trainingContext, "We sell green tea.");
      },
    );

    await t.step("the expiry sweep reaches the screen live: Expired, without Approve or Reject", async () => {
      // The three PENDING ones: the stale one, and the two above.
      assert.equal(await expireApprovals(suite.t.app.deps, clock.now()), 3);
      const expired = "Expired: it waited more than 24 hours and can no longer be decided.";
      await waiting.getByRole("status").filter({ hasText: expired }).waitFor();
      await late.getByRole("status").filter({ hasText: expired }).waitFor();
      assert.equal(await waiting.getByRole("button").count(), 0);
      assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0);
      for (const id of [lateId, waitingId]) {
        assert.equal((await manager.client.get(`/api/approvals/${id}`)).body.status, "EXPIRED");
      }
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
    await model.close();
  }
});
