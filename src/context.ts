/** What every service receives: the app's dependencies, and for most calls the acting principal. */
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Clock } from "./shared/clock.ts";
import type { Logger } from "./shared/logger.ts";
import type { JwtKeys } from "./auth/jwt.ts";
import type { OutboundPolicy } from "./shared/outbound.ts";
import type { Actor } from "./auth/actor.ts";

export interface Deps {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  jwt: JwtKeys;
  outbound: OutboundPolicy;
}

/** Deps plus the actor resolved for the request's workspace. */
export interface ActorContext extends Deps {
  actor: Actor;
}
