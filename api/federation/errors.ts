/** Why a pull or a verification stopped: a stable code and a sentence naming what did not match. */
export type FederationErrorCode =
  | 'UNREACHABLE'
  | 'HTTP_STATUS'
  | 'ADDRESS_REFUSED'
  | 'REDIRECT_REFUSED'
  | 'LIMIT_EXCEEDED'
  | 'INVALID_DOCUMENT'
  | 'PROTOCOL_MISMATCH'
  | 'ORIGIN_MISMATCH'
  | 'KEY_CHANGED'
  | 'PINNED_KEY_MISMATCH'
  | 'BAD_SIGNATURE'
  | 'EXPIRED_MANIFEST'
  | 'REPLAYED_MANIFEST'
  | 'ALTERED_RECORD'
  | 'INVALID_RECORD';

export class FederationError extends Error {
  constructor(
    readonly code: FederationErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'FederationError';
  }
}
