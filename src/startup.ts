/**
 * The start of both entry points (`deno task start`, `deno task admin`): the configuration, then
 * the app. A problem the operator must fix (a bad variable, a database the embedded PostgreSQL cannot
 * reach) is printed as its message alone and exits 78 (EX_CONFIG): nothing to retry until then.
 */
import { ConfigError, loadConfig } from "./config.ts";
import { type App, buildApp, type BuildOptions } from "./app.ts";
import { StartupError } from "./db/embedded.ts";

export async function startApp(options: BuildOptions = {}): Promise<App> {
  try {
    return await buildApp(loadConfig(Deno.env.toObject()), options);
  } catch (e) {
    if (e instanceof ConfigError || e instanceof StartupError) {
      console.error(e.message);
      Deno.exit(78);
    }
    throw e;
  }
}
