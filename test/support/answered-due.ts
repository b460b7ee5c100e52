// A DelegatingStore whose due reads wait for the test's answer, so a read can be made to cross whatever
// the test does meanwhile (a re-registration, a snapshot being read).
import type { DueLapse } from '../../src/store/types.js';
import { DelegatingStore } from './delegating-store.js';

/** Due reads held until the test answers them; without an answer queued, nothing is due. */
export class AnsweredDue extends DelegatingStore {
  private readonly pending: Array<{ sent: () => void; reply: Promise<DueLapse[]> }> = [];

  /** The next due read: `sent` once the feed has sent it, answered with `answer`. */
  next(): { sent: Promise<void>; answer(lapses: DueLapse[]): void } {
    let sent!: () => void;
    let answer!: (lapses: DueLapse[]) => void;
    const wasSent = new Promise<void>((resolve) => (sent = resolve));
    const reply = new Promise<DueLapse[]>((resolve) => (answer = resolve));
    this.pending.push({ sent, reply });
    return { sent: wasSent, answer };
  }

  override async dueLapses(): Promise<DueLapse[]> {
    const due = this.pending.shift();
    if (!due) return [];
    due.sent();
    return due.reply;
  }
}
