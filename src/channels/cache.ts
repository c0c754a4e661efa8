/**
 * Each process remembers the WhatsApp channels it has looked up (the row and its opened secrets),
 * so an inbound post and its worker cost no channel lookup. A change or a delete of a channel sends
 * `pg_notify(CHANNELS_CHANGED, id)` in its transaction; every process LISTENs on one connection of
 * its own and forgets that channel when the change commits (the process that made it also forgets
 * it at once). While that connection is down nothing is remembered, so a missed notification cannot
 * leave a stale entry behind.
 *
 * Callers never trust an entry for a "no": a post whose signature does not verify, or whose records
 * name another number, is checked again against a fresh read (`fresh`) before it is refused or
 * ignored. So a new secret or number works on the very next post in every process; what a stale
 * entry can still do, for the few ms until the notification arrives, is accept a post signed with
 * the secret just replaced, or queue one for a channel just deleted (its worker then finds nothing).
 */
import pg from "pg";
import type { Db, Tx } from "../db/client.ts";
import type { Logger } from "../shared/logger.ts";
import type { SecretBox } from "../shared/secret_box.ts";
import { type ChannelSecrets, openSecrets } from "./whatsapp_config.ts";

/** The NOTIFY channel of channel changes (payload: the channel id). */
export const CHANNELS_CHANGED = "switchboard_channels";

/** What the inbound path needs of a WhatsApp channel. */
export interface InboundChannel {
  id: string;
  workspaceId: string;
  agentId: string;
  phoneNumberId: string | null;
  secrets: Partial<ChannelSecrets>;
}

const RECONNECT_MS = 1000;
/** Entries kept at most (least recently looked up go first). */
const MAX_ENTRIES = 10_000;

/** Inside the transaction of a channel's change or delete: every process forgets it on commit. */
export async function announceChannelChange(tx: Tx, channelId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${CHANNELS_CHANGED}, ${channelId})`;
}

export class ChannelCache {
  readonly #entries = new Map<string, InboundChannel>();
  /** Bumped by every forget: a read that started before one must not store what it read. */
  #generation = 0;
  #client: pg.Client | null = null;
  #listening = false;
  #stopped = false;
  #reconnect: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  /** Opens the LISTEN connection; resolves once it listens (or failed: then nothing is remembered). */
  async start(): Promise<void> {
    try {
      await this.#connect();
    } catch (error) {
      this.logger.warn("channel cache LISTEN failed; channels are read on every post", {
        error: String(error),
      });
      this.#scheduleReconnect();
    }
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: "switchboard-channels",
    });
    client.on("notification", (n) => {
      if (n.channel === CHANNELS_CHANGED && n.payload) this.forget(n.payload);
    });
    const lost = () => {
      if (this.#client !== client) return;
      this.#client = null;
      this.#listening = false;
      this.#forgetAll();
      client.end().catch(() => {});
      this.#scheduleReconnect();
    };
    client.on("error", (error) => {
      this.logger.warn("channel cache LISTEN connection failed", { error: String(error) });
      lost();
    });
    client.on("end", lost);
    await client.connect();
    await client.query(`LISTEN ${CHANNELS_CHANGED}`);
    if (this.#stopped) {
      await client.end();
      return;
    }
    this.#client = client;
    this.#listening = true;
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#reconnect) return;
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined;
      this.#connect().catch(() => this.#scheduleReconnect());
    }, RECONNECT_MS);
  }

  /** The WhatsApp channel `id`, remembered or read; null when there is none. */
  async whatsapp(id: string): Promise<InboundChannel | null> {
    const known = this.#entries.get(id);
    if (known) {
      this.#entries.delete(id);
      this.#entries.set(id, known);
      return known;
    }
    return await this.fresh(id);
  }

  /** The WhatsApp channel of Meta's phone number id `phoneNumberId` (unique), or null. */
  async whatsappByNumber(phoneNumberId: string): Promise<InboundChannel | null> {
    const row = await this.db.channel.findFirst({
      where: { phoneNumberId, type: "WHATSAPP" },
      select: { id: true },
    });
    return row ? await this.whatsapp(row.id) : null;
  }

  /** Reads the WhatsApp channel `id` now (whatever is remembered), and remembers it. */
  async fresh(id: string): Promise<InboundChannel | null> {
    const generation = this.#generation;
    const row = await this.db.channel.findFirst({
      where: { id, type: "WHATSAPP" },
      select: { id: true, workspaceId: true, agentId: true, phoneNumberId: true, credentials: true },
    });
    if (!row) {
      this.#entries.delete(id);
      return null;
    }
    const { credentials, ...rest } = row;
    const channel: InboundChannel = {
      ...rest,
      secrets: credentials ? openSecrets({ secrets: this.secrets }, credentials) : {},
    };
    // Only while every change is being heard, and when none was heard since the read began.
    if (this.#listening && generation === this.#generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(id, channel);
    }
    return channel;
  }

  forget(id: string): void {
    this.#generation++;
    this.#entries.delete(id);
  }

  #forgetAll(): void {
    this.#generation++;
    this.#entries.clear();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#reconnect);
    this.#listening = false;
    this.#forgetAll();
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
  }
}
