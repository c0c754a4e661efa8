/**
 * The console in a real browser: Debian's Chromium driven by playwright-core, its background
 * networking off and every request to anything but 127.0.0.1 refused, against a test app that
 * listens on a port of 127.0.0.1. One browser per test file (`consoleSuite`), a fresh context
 * (cookies, storage) per page; pages record what they refused and any script error or dialog.
 */
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import type { App, BuildOptions } from "../../src/app.ts";
import { startTestApp, type TestApp } from "./app.ts";
import { eventually } from "./receiver.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const DESK = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Where the console guide's screenshots (docs/console.md) are written (made by the tests, so they show what the console does). */
const SCREENSHOTS = new URL("../../docs/screenshots/", import.meta.url);

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Requests refused because they left 127.0.0.1 (a console page must make none). */
  refused: string[];
  /** Uncaught script errors and dialogs (an `alert` from injected markup lands here). */
  incidents: string[];
  close(): Promise<void>;
}

export interface ConsoleSuite {
  t: TestApp;
  baseUrl: string;
  browser: Browser;
  /** A new page (own context) at `path`, at the desk size unless told. */
  open(path?: string, viewport?: { width: number; height: number }): Promise<ConsolePage>;
  close(): Promise<void>;
}

/** Launches Chromium: no sandbox (tests run as root), nothing of its own in the background. */
export async function launchChromium(): Promise<Browser> {
  if (!(await Deno.stat(CHROMIUM).then(() => true, () => false))) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  }
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-background-networking",
      "--no-first-run",
      "--disable-component-update",
      "--disable-dev-shm-usage",
      "--disable-gpu",
    ],
  });
}

/**
 * A test app listening on 127.0.0.1 (port chosen by the system) and one browser for the file;
 * `options` as buildApp's (an injected clock, no workers).
 */
export async function consoleSuite(
  env: Record<string, string> = {},
  options: BuildOptions = {},
): Promise<ConsoleSuite> {
  // The browser starts while the app and its database do.
  const [t, browser] = await Promise.all([
    startTestApp({ PORT: "0", HOST: "127.0.0.1", ...env }, options),
    launchChromium(),
  ]);
  const { port } = await t.app.start();
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    t,
    baseUrl,
    browser,
    async open(path = "/", viewport = DESK) {
      const context = await browser.newContext({ viewport, baseURL: baseUrl });
      const refused: string[] = [];
      const incidents: string[] = [];
      await context.route("**/*", (route) => {
        const url = new URL(route.request().url());
        if (url.hostname === "127.0.0.1") return route.continue();
        refused.push(url.href);
        return route.abort("blockedbyclient");
      });
      // Waits end sooner than Playwright's 30 s default, with room for a loaded machine.
      context.setDefaultTimeout(20_000);
      const page = await context.newPage();
      page.on("pageerror", (err) => incidents.push(`pageerror: ${err.message}`));
      page.on("dialog", (dialog) => {
        incidents.push(`dialog: ${dialog.type()} ${dialog.message()}`);
        dialog.dismiss().catch(() => {});
      });
      await page.goto(path);
      return { page, context, refused, incidents, close: () => context.close() };
    },
    async close() {
      await browser.close();
      await t.close();
    },
  };
}

/** Waits until a text field is empty (a form emptied once its send is answered). */
export async function emptied(field: Locator): Promise<void> {
  await field.page().waitForFunction(
    (el) => (el as HTMLInputElement).value === "",
    await field.elementHandle(),
  );
}

/** Signs in through the form as `who` and waits for the console's header. */
export async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("button", { name: "Log out" }).waitFor();
}

/**
 * A screenshot of the page for docs/console.md (docs/screenshots/NAME.png). Always taken; written when
 * the file is missing or UPDATE_SCREENSHOTS=1, so a test run does not rewrite the committed images
 * (their timestamps differ on every run).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const image = await page.screenshot({ fullPage: false });
  const file = new URL(`${name}.png`, SCREENSHOTS);
  const exists = await Deno.stat(file).then(() => true, () => false);
  if (exists && Deno.env.get("UPDATE_SCREENSHOTS") !== "1") return;
  await Deno.mkdir(SCREENSHOTS, { recursive: true });
  await Deno.writeFile(file, image);
}

/** The form controls of the page that have no label (neither a <label> nor aria-label). */
export async function unlabelledControls(page: Page): Promise<string[]> {
  return await page.evaluate(() =>
    [...document.querySelectorAll<HTMLInputElement>("input, select, textarea")]
      .filter((el) => !el.labels?.length && !el.getAttribute("aria-label"))
      .map((el) => el.outerHTML)
  );
}

/**
 * Presses Tab (at most `limit` times: the focus goes round the page) until `control` has the focus,
 * and fails unless it shows that focus: an outline drawn by `:focus-visible`.
 */
export async function tabTo(page: Page, control: Locator, limit = 60): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    const ring = await control.evaluate((el) => {
      if (el !== document.activeElement) return null;
      const style = getComputedStyle(el);
      return {
        visible: el.matches(":focus-visible"),
        outline: `${style.outlineStyle} ${style.outlineWidth}`,
      };
    });
    if (!ring) continue;
    if (!ring.visible || /^none|\b0px$/.test(ring.outline)) {
      throw new Error(`${control} has the focus without showing it (outline: ${ring.outline})`);
    }
    return;
  }
  throw new Error(`Tab does not reach ${control} in ${limit} presses`);
}

/** Fails when the page is wider than its viewport (something overflows sideways). */
export async function assertFitsWidth(page: Page, what: string): Promise<void> {
  const [width, viewport] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
  if (width > viewport) throw new Error(`${what} is ${width}px wide in a ${viewport}px viewport`);
}

/**
 * Waits until the server holds exactly `n` live feeds (subscriptions with distinct documents), so
 * an event a test causes next reaches the page's subscriptions rather than racing their start.
 */
export const liveFeeds = (app: App, n: number) =>
  eventually(() => Promise.resolve(app.deps.live.subscribers === n || undefined));
