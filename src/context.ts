/** What every service receives: the app's dependencies, and for most calls the acting principal. */
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Clock } from "./shared/clock.ts";
import type { Logger } from "./shared/logger.ts";
import type { JwtKeys } from "./auth/jwt.ts";
import type { OutboundPolicy } from "./shared/outbound.ts";
import type { Actor } from "./auth/actor.ts";
import type { EventBus } from "./shared/events.ts";
import type { JobQueue } from "./shared/jobs.ts";
import type { SecretBox } from "./shared/secret_box.ts";
import type { LanguageModel } from "./llm/client.ts";
import type { LiveHub } from "./live/hub.ts";
import type { ChannelCache } from "./channels/cache.ts";
import type { Instance } from "./db/instance.ts";

export interface Deps {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  jwt: JwtKeys;
  outbound: OutboundPolicy;
  /** Domain events: publish inside the transaction of the change (shared/events.ts). */
  events: EventBus;
  /** Enqueue jobs inside a transaction (pg-boss, src/jobs/boss.ts). */
  jobs: JobQueue;
  /** Seals secrets stored in the database (shared/secret_box.ts). */
  secrets: SecretBox;
  /** The language model of the reply pipeline (llm/openai.ts). */
  llm: LanguageModel;
  /** Live events of every process of the database, for subscriptions (live/hub.ts). */
  live: LiveHub<Deps>;
  /** This process' WhatsApp channels with their opened secrets, forgotten on change (channels/cache.ts). */
  channels: ChannelCache;
  /** This server process as the database knows it: the id its claims carry (db/instance.ts). */
  instance: Instance;
}

/** Deps plus the actor resolved for the request's workspace. */
export interface ActorContext extends Deps {
  actor: Actor;
}
