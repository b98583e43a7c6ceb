/**
 * Structured logs: JSON lines through pino (ADR 0016), one object a line on stdout, with
 * `time`, `level`, `pid`, `msg`, and the `request_id` (and `job_id`) of the work the line
 * belongs to, taken from the request context. LOG_LEVEL sets the threshold.
 *
 * What is never logged: question text, request bodies, query strings, addresses (clients
 * appear as the same keyed hash the rate limits use), keys and secrets.
 */
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { currentContext } from './request-context.ts';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LevelWithSilent[];
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  /** Where the lines go: stdout (synchronously, so no line is lost at exit) unless given. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin() {
        const context = currentContext();
        if (!context) return {};
        return context.jobId ? { request_id: context.requestId, job_id: context.jobId } : { request_id: context.requestId };
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** The `(line) => void` the app and its services take, as lines of a logger at a level. */
export function lineLog(logger: Logger, level: 'info' | 'warn' | 'error' = 'info'): (line: string) => void {
  return (line) => logger[level](line);
}
