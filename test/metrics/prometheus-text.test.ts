// The test parser itself: it must refuse what Prometheus refuses, or "/metrics parses" proves nothing.
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, valueOf } from './prometheus-text.js';

const GOOD = [
  '# HELP a_total Things.',
  '# TYPE a_total counter',
  'a_total{kind="x\\"y\\\\z\\n"} 3',
  '# TYPE h histogram',
  'h_bucket{le="0.1"} 1',
  'h_bucket{le="+Inf"} 2',
  'h_sum 0.3',
  'h_count 2',
  '# TYPE g gauge',
  'g NaN',
  '',
].join('\n');

describe('parsePrometheusText', () => {
  it('reads families, labels with escapes, histograms and special values', () => {
    const families = parsePrometheusText(GOOD);
    expect(valueOf(families, 'a_total', { kind: 'x"y\\z\n' })).toBe(3);
    expect(valueOf(families, 'h_count')).toBe(2);
    expect(valueOf(families, 'g')).toBeNaN();
  });

  it.each([
    ['a sample of an undeclared family', 'b 1\n'],
    ['a missing final newline', '# TYPE g gauge\ng 1'],
    ['a bad value', '# TYPE g gauge\ng one\n'],
    ['an unquoted label', '# TYPE g gauge\ng{a=1} 1\n'],
    ['a duplicate series', '# TYPE g gauge\ng{a="1"} 1\ng{a="1"} 2\n'],
    ['a bad escape', '# TYPE g gauge\ng{a="\\t"} 1\n'],
    ['an unknown type', '# TYPE g thing\n'],
    ['a non-cumulative histogram', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\nh_sum 1\n'],
    ['a histogram whose +Inf is not its count', '# TYPE h histogram\nh_bucket{le="+Inf"} 1\nh_count 2\nh_sum 1\n'],
  ])('refuses %s', (_what, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
