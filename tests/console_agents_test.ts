/**
 * Agents in the console: every setting and behaviour flag saved from the page (read back over
 * REST), the prompt edited with a reason, the versions with a line diff, and "Revert".
 */
import assert from "node:assert/strict";
import { assertFitsWidth, consoleSuite, PHONE, screenshot, signIn } from "./_helpers/browser.ts";

Deno.test("an agent's settings are saved, its prompt edited, compared and reverted from the console", async (t) => {
  const suite = await consoleSuite();
  try {
    const { owner } = await suite.t.seed.workspace("Acme");
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, owner);
    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByRole("link", { name: /Ana/ }).click();
    await page.getByRole("heading", { name: /Ana/ }).waitFor();

    await t.step("settings and flags are saved whole", async () => {
      // The form starts from the stored values, choices included (a save sends them all).
      assert.equal(await page.getByLabel("Message grouping").inputValue(), "MEDIUM");
      await page.getByLabel("Job name").fill("Acme Tea");
      await page.getByLabel("Temperature").fill("0.4");
      await page.getByLabel("Message grouping").selectOption("FAST");
      await page.getByLabel("Sees images (vision)").check();
      await page.getByLabel("Uses emoji").uncheck();
      await page.getByLabel("Daily replies per contact").fill("20");
      await page.getByRole("button", { name: "Save settings" }).click();
      await page.getByText("Settings saved.").waitFor();
      const saved = (await owner.client.get(`/api/agents/${agent.id}`)).body;
      assert.equal(saved.jobName, "Acme Tea");
      assert.equal(saved.temperature, 0.4);
      assert.equal(saved.messageGroupingTime, "FAST");
      assert.equal(saved.enabledVision, true);
      assert.equal(saved.enabledEmoji, false);
      assert.equal(saved.maxDailyMessages, 20);
      // Untouched settings keep their values (the form sends every field).
      assert.equal(saved.enabledHumanTransfer, true);
      assert.equal(saved.autoCloseMinutes, 60);
      assert.equal(saved.systemPrompt, agent.systemPrompt);
    });

    await t.step("Pause and Resume set the status", async () => {
      await page.getByRole("button", { name: "Pause" }).click();
      await page.getByRole("button", { name: "Resume" }).waitFor();
      assert.equal((await owner.client.get(`/api/agents/${agent.id}`)).body.status, "PAUSED");
      await page.getByRole("button", { name: "Resume" }).click();
      await page.getByRole("button", { name: "Pause" }).waitFor();
    });

    /** Edits the prompt through the page and waits for the new text. */
    const editPrompt = async (text: string, why: string) => {
      await page.getByRole("button", { name: "Edit prompt" }).click();
      await page.getByLabel("System prompt").fill(text);
      await page.getByLabel("Why").fill(why);
      await page.getByRole("button", { name: "Save prompt" }).click();
      await page.getByRole("cell", { name: why }).waitFor();
    };

    await t.step(
      "the prompt is edited twice; the versions' diff shows the lines the last edit changed",
      async () => {
        await editPrompt("You are Ana.\nAnswer in one sentence.", "Shorter answers");
        await editPrompt("You are Ana.\nAnswer in two sentences.\nBe warm.", "Warmer answers");
        const diff = page.getByRole("group", { name: "Prompt diff" });
        await diff.locator(".added").first().waitFor();
        assert.deepEqual(await diff.locator(".added").allTextContents(), [
          "Answer in two sentences.",
          "Be warm.",
        ]);
        assert.deepEqual(await diff.locator(".removed").allTextContents(), ["Answer in one sentence."]);
        assert.deepEqual(await diff.locator(".same").allTextContents(), ["You are Ana."]);
        await screenshot(page, "agent");
      },
    );

    await t.step("Revert restores an earlier version as a new one", async () => {
      await page.getByRole("button", { name: "Revert" }).click();
      await page.locator("pre.prompt").filter({ hasText: "Answer in one sentence." }).waitFor();
      const read = (await owner.client.get(`/api/agents/${agent.id}`)).body;
      assert.equal(read.systemPrompt, "You are Ana.\nAnswer in one sentence.");
      const versions = (await owner.client.get(`/api/agents/${agent.id}/prompt-versions`)).body.data;
      assert.equal(versions.length, 3);
      assert.equal(versions[0].systemPrompt, read.systemPrompt);
      await page.locator("table.versions tbody tr").nth(2).waitFor();
      // The newest version is the current one: nothing to revert to but the one before.
      assert.equal(await page.getByRole("button", { name: "Revert" }).count(), 1);
    });

    await t.step("on a 390 px phone the versions read without scrolling sideways", async () => {
      const why = "Customers asked for the opening hours first, as in " +
        "https://acme-tea.example.com/support/opening-hours-and-holidays-2026";
      const put = await owner.client.put(`/api/agents/${agent.id}/prompt`, {
        systemPrompt: "You are Ana.\nGive the opening hours first.",
        rationale: why,
      });
      assert.equal(put.status, 200);
      const phone = await suite.open("/", PHONE);
      await signIn(phone.page, owner);
      await phone.page.getByRole("link", { name: "Agents" }).click();
      await phone.page.getByRole("link", { name: /Ana/ }).click();
      const row = phone.page.getByRole("row", { name: /^Version of / }).first();
      await row.getByRole("cell", { name: why }).waitFor();
      await assertFitsWidth(phone.page, "the prompt versions");
      // Each column of every row: inside the screen, its text whole (nothing cut or scrolled),
      // and wide enough to read: the reason across the screen, the date and author on one line.
      const cells = await phone.page.locator("table.versions tbody tr").evaluateAll((rows) =>
        rows.map((tr) =>
          [...tr.querySelectorAll("td")].map((td) => {
            const box = td.getBoundingClientRect();
            const lineHeight = parseFloat(getComputedStyle(td).lineHeight);
            return {
              text: td.textContent ?? "",
              left: box.left,
              right: box.right,
              width: box.width,
              lines: Math.round(box.height / lineHeight),
              clipped: td.scrollWidth > td.clientWidth,
            };
          })
        )
      );
      assert.equal(cells.length, 4);
      for (const [when, by, reason, action] of cells) {
        for (const cell of [when, by, reason, action]) {
          assert.ok(cell.left >= 0 && cell.right <= PHONE.width, `${JSON.stringify(cell)} is on the screen`);
          assert.equal(cell.clipped, false, `${cell.text} is whole`);
        }
        assert.equal(when.lines, 1, `the date on one line: ${JSON.stringify(when)}`);
        assert.equal(by.lines, 1, `the author on one line: ${JSON.stringify(by)}`);
        assert.ok(reason.width >= 300, `the reason across the screen: ${JSON.stringify(reason)}`);
      }
      assert.equal(cells[0][2].text, why);
      assert.equal(await phone.page.getByRole("button", { name: "Revert" }).count(), 3);
      await phone.page.locator("table.versions").scrollIntoViewIfNeeded();
      await screenshot(phone.page, "agent-versions-phone");
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
