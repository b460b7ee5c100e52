// `poolscope/relay`: a PoolRelay's heartbeat loop, to embed in a sidecar or a serving process.
export { startRelay, type Relay, type RelayOptions, type RelayStatus, type HeartbeatOutcome } from './relay.js';
export { RegistrationError, validateRegistration } from './registration.js';
export { readRegistrationFile, RegistrationFileError } from './registration-file.js';
export { HttpTransport, type HttpTransportOptions } from '../client/http-transport.js';
export type { HeartbeatReply, Registration, RegistrationInput } from '../contract/index.js';
