/**
 * The owner's agent screens in Chromium: an agent created from a template the server offers, its
 * intents created, edited (required fields and trigger types) and deleted, the agent deleted after
 * a question; each effect read back over REST; the screens at a desk's and a phone's width; and an
 * AGENT and a VIEWER offered none of it.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import {
  assertFitsWidth,
  consoleSuite,
  PHONE,
  screenshot,
  signIn,
  unlabelledControls,
} from "./_helpers/browser.ts";

Deno.test("an owner creates an agent from a template, edits its intents and deletes it; other roles see none of it", async (t) => {
  const suite = await consoleSuite();
  try {
    const { workspaceId, owner } = await suite.t.seed.workspace("Acme");
    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, owner);
    let agentId = "";

    await t.step("New agent offers the server's templates and creates an ACTIVE agent", async () => {
      await page.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "Agents" }).click();
      await page.getByText("No agents yet.").waitFor();
      await page.getByRole("button", { name: "New agent" }).click();
      const offered = await page.getByLabel("Template").locator("option").evaluateAll((os) =>
        os.map((o) => (o as HTMLOptionElement).value)
      );
      const served = await owner.client.graphql(`{ __type(name: "AgentTemplate") { enumValues { name } } }`);
      assert.deepEqual(offered, served.body.data.__type.enumValues.map((v: { name: string }) => v.name));
      assert.ok(offered.includes("SUPORTE"), offered.join());
      await page.getByLabel("Name").fill("Bia");
      await page.getByLabel("Template").selectOption("SUPORTE");
      await page.getByLabel("Company", { exact: true }).fill("Acme Tea");
      await page.getByRole("button", { name: "Create agent" }).click();
      await page.getByRole("heading", { name: /Bia/ }).waitFor();
      const agents = (await owner.client.get("/api/agents")).body.data;
      assert.equal(agents.length, 1);
      agentId = agents[0].id;
      assert.equal(new URL(page.url()).hash, `#/agents/${agentId}`);
      const agent = (await owner.client.get(`/api/agents/${agentId}`)).body;
      assert.equal(agent.name, "Bia");
      assert.equal(agent.template, "SUPORTE");
      assert.equal(agent.status, "ACTIVE");
      assert.equal(agent.jobName, "Acme Tea");
      assert.match(agent.systemPrompt, /^Você é Bia, atendente de suporte ao cliente da empresa Acme Tea\./);
    });

    const intents = async () => (await owner.client.get(`/api/agents/${agentId}/intents`)).body.data;

    await t.step("an intent is created with its trigger types and required fields", async () => {
      await page.getByRole("navigation", { name: "Agent" }).getByRole("link", { name: "Intents" }).click();
      await page.getByText("No intents yet.").waitFor();
      await page.getByRole("button", { name: "New intent" }).click();
      const editor = page.getByRole("form", { name: "New intent" });
      await editor.getByLabel("Name", { exact: true }).fill("Agendar Consulta");
      await editor.locator("textarea[name=description]").fill("Books an appointment");
      await editor.getByLabel("Webhook URL").fill("https://clinic.example/book");
      await editor.getByLabel("Method").selectOption("PUT");
      // Text is ticked for a new intent; images too.
      assert.equal(await editor.getByLabel("Text").isChecked(), true);
      await editor.getByLabel("Images").check();
      await editor.getByRole("button", { name: "Add field" }).click();
      await editor.getByLabel("Field 1 name").fill("date");
      await editor.getByLabel("Field 1 type").fill("date");
      await editor.getByLabel("Field 1 description").fill("Day of the visit");
      await editor.getByRole("button", { name: "Add field" }).click();
      await editor.getByLabel("Field 2 name").fill("patient");
      await editor.getByLabel("Field 2 description").fill("Full name");
      await editor.getByRole("button", { name: "Create intent" }).click();
      await page.getByRole("listitem", { name: "Agendar Consulta" }).waitFor();
      const [intent, ...others] = await intents();
      assert.deepEqual(others, []);
      assert.equal(intent.name, "Agendar Consulta");
      assert.equal(intent.tag, "agendar-consulta");
      assert.equal(intent.description, "Books an appointment");
      assert.equal(intent.webhookUrl, "https://clinic.example/book");
      assert.equal(intent.webhookMethod, "PUT");
      assert.deepEqual(intent.triggerOnTypes, ["TEXT", "IMAGE"]);
      assert.deepEqual(intent.requiredFields, [
        { name: "date", type: "date", description: "Day of the visit" },
        { name: "patient", type: "string", description: "Full name" },
      ]);
      const card = page.getByRole("listitem", { name: "Agendar Consulta" });
      await card.getByText("[agendar-consulta]").waitFor();
      await card.getByText("Text, Images").waitFor();
    });

    await t.step("editing saves the intent whole: a field removed, a trigger type changed", async () => {
      const card = page.getByRole("listitem", { name: "Agendar Consulta" });
      await card.getByRole("button", { name: "Edit" }).click();
      const editor = page.getByRole("form", { name: "Edit Agendar Consulta" });
      await editor.locator("textarea[name=description]").fill("Books a visit to the clinic");
      await editor.getByRole("button", { name: "Remove field 1" }).click();
      assert.equal(await editor.getByLabel("Field 1 name").inputValue(), "patient");
      await editor.getByLabel("Text").uncheck();
      await editor.getByLabel("Voice notes").check();
      await screenshot(page, "intent-editor");
      await editor.getByRole("button", { name: "Save intent" }).click();
      await card.getByText("Books a visit to the clinic").waitFor();
      const [intent] = await intents();
      assert.equal(intent.description, "Books a visit to the clinic");
      assert.deepEqual(intent.triggerOnTypes, ["AUDIO", "IMAGE"]);
      assert.deepEqual(intent.requiredFields, [{
        name: "patient",
        type: "string",
        description: "Full name",
      }]);
      assert.equal(intent.webhookMethod, "PUT");
      // Nothing fires on no message type: the editor says so and sends nothing.
      await card.getByRole("button", { name: "Edit" }).click();
      await editor.getByLabel("Voice notes").uncheck();
      await editor.getByLabel("Images").uncheck();
      await editor.getByRole("button", { name: "Save intent" }).click();
      await editor.getByRole("alert").filter({ hasText: "Choose at least one message type" }).waitFor();
      assert.deepEqual((await intents())[0].triggerOnTypes, ["AUDIO", "IMAGE"]);
      await editor.getByRole("button", { name: "Cancel" }).click();
      await screenshot(page, "intents");
    });

    await t.step("the intents fit a phone, every field labelled", async () => {
      const phone = await suite.open(`/#/agents/${agentId}/intents`, PHONE);
      await signIn(phone.page, owner);
      await phone.page.getByRole("listitem", { name: "Agendar Consulta" }).waitFor();
      await assertFitsWidth(phone.page, "intents");
      await phone.page.getByRole("button", { name: "Edit" }).click();
      await phone.page.getByLabel("Field 1 name").waitFor();
      await assertFitsWidth(phone.page, "the intent editor");
      assert.deepEqual(await unlabelledControls(phone.page), []);
      await screenshot(phone.page, "intents-phone");
      await phone.close();
    });

    await t.step("Delete asks first: Cancel keeps the intent, confirming deletes it", async () => {
      const card = page.getByRole("listitem", { name: "Agendar Consulta" });
      await card.getByRole("button", { name: "Delete" }).click();
      const question = page.getByRole("alertdialog");
      await question.getByText('Delete the intent "Agendar Consulta"?').waitFor();
      // The keyboard lands on Cancel.
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel");
      await page.keyboard.press("Enter");
      await question.waitFor({ state: "detached" });
      assert.equal((await intents()).length, 1);
      await card.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("button", { name: "Delete intent" }).click();
      await page.getByText("No intents yet.").waitFor();
      assert.deepEqual(await intents(), []);
    });

    await t.step("the agent is deleted after a question naming what goes with it", async () => {
      await page.getByRole("navigation", { name: "Agent" }).getByRole("link", { name: "Settings" }).click();
      await page.getByRole("button", { name: "Delete agent" }).click();
      await page.getByText("Delete Bia with all its conversations, messages, intents, channels and webhooks?")
        .waitFor();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete agent" }).click();
      await page.getByText("No agents yet.").waitFor();
      assert.equal(new URL(page.url()).hash, "#/agents");
      assert.equal((await owner.client.get(`/api/agents/${agentId}`)).status, 404);
    });

    await t.step("an AGENT and a VIEWER see no owner screen", async () => {
      const kept = await suite.t.seed.agent(owner.client, { name: "Ana" });
      for (const role of ["AGENT", "VIEWER"] as const) {
        const member = await suite.t.seed.member(workspaceId, role);
        const other = await suite.open("/#/agents");
        await signIn(other.page, member);
        await other.page.getByRole("link", { name: /Ana/ }).waitFor();
        assert.equal(await other.page.getByRole("button", { name: "New agent" }).count(), 0, role);
        await other.page.goto(`/#/agents/${kept.id}`);
        await other.page.getByLabel("Name", { exact: true }).waitFor();
        assert.equal(await other.page.getByRole("navigation", { name: "Agent" }).count(), 0, role);
        assert.deepEqual(await buttons(other.page), ["Log out"], role);
        for (const part of ["intents", "channels", "webhooks"]) {
          await other.page.goto(`/#/agents/${kept.id}/${part}`);
          await other.page.getByText("Your role in this workspace does not include this screen.").waitFor();
          assert.deepEqual(await buttons(other.page), ["Log out"], `${role} ${part}`);
        }
        await other.close();
      }
    });

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
  }
});

/** The visible buttons' names, in page order. */
async function buttons(page: Page): Promise<string[]> {
  return (await page.getByRole("button").allInnerTexts()).map((s) => s.trim());
}
