/**
 * A customer's file opened from the console never runs as a page of the console's origin. The
 * customer sends an SVG image and an HTML document whose scripts mark the origin they run on (a
 * global, localStorage); the console shows them through short-lived signed URLs of the media
 * endpoint (which keeps its own headers: a download, sandboxed), and neither opening them from the
 * console nor navigating to their URL runs a script there. A PNG is still shown inline.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { BrowserContext, Page } from "playwright-core";
import { consoleSuite, liveFeeds, signIn } from "./_helpers/browser.ts";
import { startAi, startMediaGraph } from "./_helpers/media.ts";
import { createWhatsAppChannel, customerMessage, postSigned } from "./_helpers/whatsapp.ts";
import { waitUntil } from "./_helpers/conversations.ts";

/** What a customer's script would do on the page it runs in: mark its origin. */
const PAYLOAD = (what: string) =>
  `window.__pwned = "${what}"; try { window.top.__pwned = "${what}"; } catch (e) {} ` +
  `try { localStorage.setItem("pwned", "${what}"); } catch (e) {}`;

const SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload='${PAYLOAD("svg-onload")}'>` +
  `<script>${PAYLOAD("svg")}</script><rect width="10" height="10" fill="red"/></svg>`;
const HTML = `<!doctype html><html><body onload='${PAYLOAD("html-onload")}'><h1>Fatura</h1>` +
  `<script>${PAYLOAD("html")}</script></body></html>`;
// A 1×1 PNG.
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);

const bytes = (s: string) => new TextEncoder().encode(s);
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Whether a script of the customer's ran in `page` or on the console's origin (its localStorage). */
async function marks(console: Page, page?: Page): Promise<unknown[]> {
  const found: unknown[] = [];
  for (const p of page ? [console, page] : [console]) {
    found.push(await p.evaluate(() => (window as unknown as { __pwned?: string }).__pwned ?? null));
  }
  found.push(await console.evaluate(() => localStorage.getItem("pwned")));
  return found.filter((m) => m !== null);
}

/**
 * Opens `url` in a new tab of the console's context (as "open in a new tab" or a typed address
 * does): either the browser downloads it, or it shows it; what the tab then holds is returned.
 */
async function openInTab(context: BrowserContext, url: string): Promise<{ page: Page; downloaded: boolean }> {
  const page = await context.newPage();
  const download = page.waitForEvent("download").then(() => true, () => false);
  const shown = page.goto(url).then(() => false, (e: Error) => {
    if (/Download is starting/.test(e.message)) return true;
    throw e;
  });
  const downloaded = await Promise.race([download, shown]);
  if (!downloaded) await page.waitForLoadState("load");
  return { page, downloaded };
}

Deno.test("an SVG and an HTML file of a customer, opened from the console, run no script on its origin", async (t) => {
  const graph = startMediaGraph();
  const ai = startAi(() => "Recebido.");
  const suite = await consoleSuite({
    WHATSAPP_GRAPH_URL: graph.url,
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: ai.baseUrl,
  });
  try {
    const { owner } = await suite.t.seed.workspace();
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana" });
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const files = [
      { waId: "wamid.svg", kind: "image", id: "img-svg", mimeType: "image/svg+xml", data: bytes(SVG) },
      { waId: "wamid.png", kind: "image", id: "img-png", mimeType: "image/png", data: PNG },
      {
        waId: "wamid.html",
        kind: "document",
        id: "doc-html",
        mimeType: "text/html",
        data: bytes(HTML),
        filename: "fatura.html",
      },
    ];
    for (const f of files) {
      graph.files.set(f.id, { bytes: f.data, mimeType: f.mimeType });
      const posted = await postSigned(
        suite.t.anon,
        channel.id,
        customerMessage(channel.phoneNumberId, f.waId, f.kind, {
          id: f.id,
          mime_type: f.mimeType,
          sha256: sha(f.data),
          ...(f.filename ? { filename: f.filename } : { caption: f.id }),
        }),
      );
      assert.equal(posted.status, 200);
    }
    const stored = await waitUntil(
      () => suite.t.app.deps.db.message.findMany({ where: { externalId: { in: files.map((f) => f.waId) } } }),
      (rows) => rows.length === 3 && rows.every((m) => !m.mediaPending),
    );

    const { page, context, refused, incidents, close } = await suite.open("/");
    await signIn(page, owner);
    await page.goto(`/#/conversation/${stored[0].conversationId}`);
    await liveFeeds(suite.t.app, 2);
    const messages = page.getByRole("list", { name: "Messages" });
    const svg = messages.locator("img[alt$='img-svg']");
    const png = messages.locator("img[alt$='img-png']");
    const link = messages.getByRole("link", { name: "fatura.html" });
    await svg.waitFor();
    await link.waitFor();

    await t.step("the console shows the PNG inline from the media endpoint", async () => {
      await page.waitForFunction(
        () => (document.querySelector("img[alt$='img-png']") as HTMLImageElement | null)?.naturalWidth === 1,
      );
      const src = (await png.getAttribute("src"))!;
      assert.match(src, /^\/api\/messages\/[^/]+\/media\?expires=\d+&signature=[\w-]+$/);
    });

    await t.step("the SVG, shown in the console and opened in a tab, runs nothing", async () => {
      const src = (await svg.getAttribute("src"))!;
      assert.ok(!src.startsWith("blob:"), src);
      const opened = await openInTab(context, src);
      assert.deepEqual(await marks(page, opened.page), []);
      assert.equal(opened.downloaded, true, "an SVG is a download");
      await opened.page.close();
    });

    await t.step("the HTML document, clicked and opened in a tab, runs nothing", async () => {
      const href = (await link.getAttribute("href"))!;
      assert.ok(!href.startsWith("blob:"), href);
      const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
      assert.equal(download.suggestedFilename(), "fatura.html");
      const opened = await openInTab(context, href);
      assert.deepEqual(await marks(page, opened.page), []);
      assert.equal(opened.downloaded, true, "an HTML file is a download");
      await opened.page.close();
    });

    await t.step("the signed URLs of the files serve them only with their own headers", async () => {
      for (const locator of [svg, link]) {
        const url = (await locator.getAttribute("src")) ?? (await locator.getAttribute("href"));
        const res = await fetch(`${suite.baseUrl}${url}`);
        await res.body?.cancel();
        assert.equal(res.status, 200);
        assert.match(res.headers.get("content-disposition")!, /^attachment/);
        assert.equal(res.headers.get("content-security-policy"), "sandbox; default-src 'none'");
        assert.equal(res.headers.get("x-content-type-options"), "nosniff");
        assert.equal(res.headers.get("cross-origin-resource-policy"), "same-origin");
      }
    });

    assert.deepEqual(await marks(page), []);
    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
    await graph.close();
    await ai.close();
  }
});
