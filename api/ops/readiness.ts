/**
 * Readiness, for a load balancer: unlike liveness (/api/health: the process answers), ready
 * means this process should be sent traffic. It is ready when the artifacts are loaded, the
 * store answers, the question embedder has warmed up, the live panel's configuration (when
 * one is given) is valid, and it is not draining. Start-up steps are marked by the server as
 * they finish; the store is asked on every probe, since an outage can start at any time.
 */
import type { Store } from '../../storage/store.ts';

export type StepName = 'artifacts' | 'embedder' | 'panel';
export type CheckName = StepName | 'store' | 'draining';

export interface CheckResult {
  ok: boolean;
  /** Why not, when not ok. */
  reason?: string;
}

export interface ReadinessReport {
  ready: boolean;
  /** The first failing check's reason, when not ready. */
  reason?: string;
  checks: Record<CheckName, CheckResult>;
}

export interface ReadinessOptions {
  /** Asked on each probe (a cheap read); its failure or a reply slower than storeTimeoutMs is not ready. */
  store: Pick<Store, 'spendStatus'>;
  /** Steps still to come, with the reason shown until they are marked; the rest start ready. */
  pending?: Partial<Record<StepName, string>>;
  storeTimeoutMs?: number;
  now?: () => Date;
}

export interface Readiness {
  /** A start-up step finished (`reason` undefined), or failed for good with its reason. */
  mark(step: StepName, reason?: string): void;
  /** SIGTERM: no longer ready, so the load balancer stops sending while in-flight work finishes. */
  drain(): void;
  readonly draining: boolean;
  check(): Promise<ReadinessReport>;
}

export const DEFAULT_STORE_PROBE_TIMEOUT_MS = 2000;

export function createReadiness(options: ReadinessOptions): Readiness {
  const steps: Record<StepName, CheckResult> = { artifacts: { ok: true }, embedder: { ok: true }, panel: { ok: true } };
  for (const [step, reason] of Object.entries(options.pending ?? {}) as [StepName, string][]) steps[step] = { ok: false, reason };
  let draining = false;
  const timeoutMs = options.storeTimeoutMs ?? DEFAULT_STORE_PROBE_TIMEOUT_MS;
  const now = options.now ?? (() => new Date());

  async function probeStore(): Promise<CheckResult> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([options.store.spendStatus(now()), late]);
      return { ok: true };
    } catch (error) {
      return { ok: false, reason: `the store does not answer: ${(error as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    mark(step, reason) {
      steps[step] = reason === undefined ? { ok: true } : { ok: false, reason };
    },
    drain() {
      draining = true;
    },
    get draining() {
      return draining;
    },
    async check() {
      const checks: Record<CheckName, CheckResult> = {
        draining: draining ? { ok: false, reason: 'the process is draining after SIGTERM' } : { ok: true },
        artifacts: steps.artifacts,
        store: await probeStore(),
        embedder: steps.embedder,
        panel: steps.panel,
      };
      const failing = Object.entries(checks).find(([, result]) => !result.ok);
      return failing ? { ready: false, reason: `${failing[0]}: ${failing[1].reason}`, checks } : { ready: true, checks };
    },
  };
}
