// A PoolRelay's registration checked against the contract's schema before anything is sent, so a relay
// with a bad registration refuses at start, naming the field, instead of collecting 400s.
import { describeIssue, registrationSchema, type Registration } from '../contract/index.js';

/** A registration the contract refuses. `field` is the dotted path (`capacity.0.value`) or the unknown key. */
export class RegistrationError extends Error {
  constructor(
    message: string,
    readonly field: string | undefined,
  ) {
    super(message);
    this.name = 'RegistrationError';
  }
}

/** The registration with its defaults filled in. @throws RegistrationError */
export function validateRegistration(input: unknown): Registration {
  const parsed = registrationSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const { field, message } = describeIssue(parsed.error.issues);
  throw new RegistrationError(message, field);
}
