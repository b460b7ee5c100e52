// The GET /pools body is written a pool at a time into a buffer of its exact size (docs/operations.md
// "Sizing"): its bytes are exactly those of JSON.stringify(list) in UTF-8, whatever the characters (multi-byte
// ones included), the filter, the regions entries, an empty list, and after pools changed size.
import { describe, expect, it } from 'vitest';
import { poolKey } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';
import { pool } from '../support/listed-pool.js';

const utf8 = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('ListedView: the body', () => {
  it('is JSON.stringify(list) in UTF-8, byte for byte', () => {
    const view = new ListedView({ epoch: 3 });
    expect(view.body()).toEqual(utf8(view.list()));
    const pools = [
      pool('a', { capabilities: ['ünïcødé', '日本語', 'emoji 🚀'], model: 'model-a' }),
      pool('b', { capabilities: ['x'.repeat(510)], model: 'model-b' }),
      pool('c', { location: { region: 'eu-west-1', zone: 'eu-west-1a' }, model: 'model-a' }),
    ];
    for (const p of pools) view.update(poolKey(p), p);
    view.setCompleteness({
      complete: false,
      reasons: ['region eu-west-1'],
      regions: [{ name: 'eu-west-1', complete: false, dropped: false, reason: 'cannot be read: "quoted" ⚠' }],
    });
    expect(new TextDecoder().decode(view.body())).toBe(JSON.stringify(view.list()));
    expect(view.body()).toEqual(utf8(view.list()));
    expect(view.body('model-a')).toEqual(utf8(view.list('model-a')));
    expect(view.body('none')).toEqual(utf8(view.list('none')));

    // A pool whose JSON grew, and one that shrank to fewer bytes.
    const grown = pool('a', { capabilities: ['ünïcødé'.repeat(40)], model: 'model-a' });
    const shrunk = pool('b', { capabilities: [], model: 'model-b' });
    view.update(poolKey(grown), grown);
    view.update(poolKey(shrunk), shrunk);
    expect(view.body()).toEqual(utf8(view.list()));
    view.update(poolKey(grown), null);
    expect(view.body()).toEqual(utf8(view.list()));
  });
});
