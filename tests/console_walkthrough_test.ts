/**
 * docs/console.md's walk-through, played as written: the stand-ins of examples/standins.ts and a
 * server with the README tour's settings (terminals 1 and 2), the tour's first three blocks of
 * terminal 3 and then the walk-through's own `<!-- console -->` blocks pasted into bash, and the
 * browser doing what each step says with the labels it names: a customer writes through the
 * stand-ins, the chat appears live, the owner takes over and replies (reaching the Graph stand-in),
 * the supervisor proposes a prompt change, the approval appears live with its diff and its replay
 * (Ana's conversation answered again, SAME) and is approved;
 * the supervisor screen with its credits, a second proposal rejected, and the approved version
 * under Agents.
 */
import assert from "node:assert/strict";
import { type ConsoleSuite, consoleSuite, liveFeeds, signIn } from "./_helpers/browser.ts";
import {
  baseEnv,
  type Child,
  client,
  DEFAULT_BASE,
  freePorts,
  ROOT,
  serverBlock,
  serverEnv,
  Shell,
  spawn,
  tourBlocks,
  withPorts,
} from "./_helpers/tour.ts";

const GUIDE = await Deno.readTextFile(`${ROOT}docs/console.md`);
const [SEND, ASK, LAST_LINE] = tourBlocks(GUIDE).filter((b) => b.kind === "console").map((b) => b.text);
/** Terminal 3's blocks the walk-through starts from: the login; Ana and her channel; `post` and `send`. */
const FIRST_BLOCKS = client.slice(0, 3);

Deno.test("docs/console.md marks its walk-through's blocks and starts from the tour's helpers", () => {
  assert.equal(tourBlocks(GUIDE).filter((b) => b.kind === "console").length, 3);
  assert.match(SEND, /^send \d+ "Hi, is anyone there\?"\n$/);
  assert.match(FIRST_BLOCKS[0], /^BASE=/);
  assert.match(FIRST_BLOCKS[1], /api\/agents\/\$AGENT\/channels/);
  assert.match(FIRST_BLOCKS[2], /^send\(\) \{/m);
  assert.ok(!/^send \d/m.test(FIRST_BLOCKS[2]), "the helpers' block sends nothing itself");
});

Deno.test("the console walk-through of docs/console.md, in a browser", async (t) => {
  const ports = freePorts();
  const children: Child[] = [];
  let suite: ConsoleSuite | undefined;
  let shell: Shell | undefined;
  try {
    const standins = spawn(
      [Deno.execPath(), "run", "-A", "examples/standins.ts"],
      { ...baseEnv(), STANDINS_PORT: String(ports[0]) },
    );
    children.push(standins);
    // The server of terminal 2 (its settings, on the test's database and port), with its first
    // owner, and the default 2 s wait before Ana answers.
    const { DATA_DIR: _dataDir, ...env } = serverEnv(serverBlock, ports);
    [suite] = await Promise.all([
      consoleSuite({ ...env, GROUPING_FAST_MS: "" }, { bootstrap: true }),
      standins.stdout.waitFor(/\[intent\] "listening/, 30_000, "the stand-ins"),
    ]);
    const app = suite.t.app;
    shell = new Shell();
    const sh = shell;
    for (const [i, block] of FIRST_BLOCKS.entries()) {
      await sh.run(withPorts(i === 0 ? block.replace(DEFAULT_BASE, `BASE=${suite.baseUrl}`) : block, ports));
    }
    const graphSends = () =>
      standins.stdout.text.split("\n").filter((l) => l.startsWith('[graph] {"path":"/1001/messages"'))
        .map((l) => JSON.parse(l.slice("[graph] ".length)));

    const { page, refused, incidents, close } = await suite.open("/");
    let sent = Promise.resolve("");

    await t.step("1. log in as the tour's owner", async () => {
      await signIn(page, { email: env.BOOTSTRAP_OWNER_EMAIL, password: env.BOOTSTRAP_OWNER_PASSWORD });
    });

    await t.step("2. the customer writes; the conversation shows up live, then Ana's answer", async () => {
      await page.getByRole("heading", { name: "Conversations" }).waitFor();
      await page.getByText("No conversations yet").waitFor();
      await liveFeeds(app, 1);
      // `send` waits 5 s after posting; the page goes on meanwhile, as a person would.
      sent = sh.run(SEND);
      const row = page.getByRole("link", { name: /Sheena/ });
      await row.filter({ hasText: "OPEN" }).waitFor();
      await row.getByText("Hello! How can I help you today?").waitFor();
      assert.deepEqual(graphSends().map((s) => s.text), ["Hello! How can I help you today?"]);
      await row.click();
    });

    await t.step("3. take over and reply: it reaches WhatsApp; release", async () => {
      await page.getByRole("heading", { name: /Sheena/ }).waitFor();
      const messages = page.getByRole("list", { name: "Messages" });
      await messages.getByText("Hi, is anyone there?").waitFor();
      await messages.getByText("Hello! How can I help you today?").waitFor();
      await page.getByRole("button", { name: "Take over" }).click();
      await page.getByRole("heading", { name: /HUMAN/ }).waitFor();
      const reply = "Hi Sheena, this is the owner. How can I help?";
      await page.getByLabel("Reply").fill(reply);
      await page.getByRole("button", { name: "Send" }).click();
      await messages.getByText(reply).waitFor();
      await standins.stdout.waitFor(/\[graph\] .*this is the owner/, 20_000, "the owner's reply at [graph]");
      assert.deepEqual(graphSends().at(-1), { path: "/1001/messages", to: "16505551234", text: reply });
      await page.getByRole("button", { name: "Release" }).click();
      await page.getByRole("heading", { name: /OPEN/ }).waitFor();
    });

    await t.step(
      "4. the supervisor, asked in terminal 3, proposes; the approval appears live and is approved",
      async () => {
        assert.match(await sent, /^webhook answered 200$/m);
        await page.getByRole("link", { name: "Approvals" }).click();
        await page.getByText("Nothing waits for a decision").waitFor();
        // Only the Approvals screen's feed is up (the conversation's are gone) before the question.
        await liveFeeds(app, 1);
        const asked = await sh.run(ASK);
        assert.match(asked, /^I proposed it \(approval \w+\); it waits for your approval\.$/m);
        const card = page.getByRole("article", { name: "Change the agent's prompt for Ana" });
        await card.getByRole("heading", { name: "Change the agent's prompt · Ana PENDING" }).waitFor();
        await card.getByText("The manager asked for a more formal tone.").waitFor();
        assert.ok(
          (await card.locator(".diff .added").allTextContents()).includes(
            "Address customers formally, as sir or madam.",
          ),
        );
        // The replay of Ana's conversation with Sheena: the stand-in answers the same either way.
        await card.getByRole("status").filter({ hasText: "Done: 1 conversation replayed." }).waitFor();
        const counts = await card.locator('dl[aria-label="Replay counts"] > div').allInnerTexts();
        assert.deepEqual(counts.slice(0, 5).map((c) => c.replace(/\s+/g, " ")), [
          "Replayed 1 of 1",
          "Same 1",
          "Changed 0",
          "Regressed 0",
          "Failed 0",
        ]);
        const replayed = card.getByRole("article", { name: "Replayed conversation, SAME" });
        await replayed.getByRole("list", { name: "The customer's messages" }).getByText(
          "Hi, is anyone there?",
        )
          .waitFor();
        for (const side of ["Current answer", "Proposed answer"]) {
          await replayed.getByRole("region", { name: side }).getByText("Hello! How can I help you today?")
            .waitFor();
        }
        await card.getByRole("button", { name: "Approve" }).click();
        await card.getByText("Approved: the change was made.").waitFor();
        assert.equal(await card.getByRole("button").count(), 0);
        assert.equal((await sh.run(LAST_LINE)).trim(), "Address customers formally, as sir or madam.");
      },
    );

    await t.step("5. the supervisor screen: credits and proposals; a second proposal rejected", async () => {
      await page.getByRole("link", { name: "Supervisor" }).click();
      const first = page.getByRole("article", { name: "Supervisor answer" }).first();
      await first.getByText(/^I proposed it/).waitFor();
      assert.equal(await first.locator(".credits").textContent(), "0.675 credits");
      await first.getByRole("list", { name: "Proposed changes" }).getByText("APPROVED").waitFor();
      await page.getByLabel("Message").fill("Make Ana more formal, please.");
      await page.getByRole("button", { name: "Send" }).click();
      const answers = page.getByRole("article", { name: "Supervisor answer" });
      await answers.nth(1).getByText("PENDING").waitFor();
      assert.equal(await answers.nth(1).locator(".credits").textContent(), "0.675 credits");
      await answers.nth(1).getByRole("link", { name: "Change the agent's prompt" }).click();
      const pending = page.getByRole("article", { name: "Change the agent's prompt for Ana" }).filter({
        has: page.getByRole("button", { name: "Reject" }),
      });
      await pending.getByRole("button", { name: "Reject" }).click();
      await page.getByText("Rejected: nothing was changed.").waitFor();
      const prompt = (await sh.run(LAST_LINE)).trim();
      assert.equal(prompt, "Address customers formally, as sir or madam.");
    });

    await t.step("6. Agents: the approved change is Ana's newest prompt version", async () => {
      await page.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "Agents" }).click();
      await page.getByRole("link", { name: /Ana/ }).click();
      const versions = page.locator("table.versions tbody tr");
      await versions.first().getByText("The manager asked for a more formal tone.").waitFor();
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
    assert.equal(shell.child.stderr.text, "", "nothing on the shell's stderr");
  } finally {
    await shell?.close();
    for (const child of children.reverse()) await child.stop();
    await suite?.close();
  }
});
