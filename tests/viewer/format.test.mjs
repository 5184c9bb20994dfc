import test from 'node:test';
import assert from 'node:assert/strict';
import F from '../../web/format.js';

test('standard error of a share', () => {
    assert.equal(F.stdErr(0.25, 100), Math.sqrt(0.25 * 0.75 / 100));
    assert.equal(F.stdErr(0, 10), 0);
    assert.ok(Number.isNaN(F.stdErr(0.5, 0)));
});

test('percent and share with its error', () => {
    assert.equal(F.percent(0.123), '12.3%');
    assert.equal(F.percent(0.0004), '0.04%');
    assert.equal(F.percent(0), '0.0%');
    assert.equal(F.shareWithErr(0.5, 0.05), '50.0% ±5.0');
    assert.equal(F.shareWithErr(0.5, NaN), '50.0%');
    // Two decimals only where one would read as zero.
    assert.equal(F.shareWithErr(0.003, 0.000996), '0.3% ±0.1');
    assert.equal(F.shareWithErr(0.003, 0.0004), '0.3% ±0.04');
    assert.equal(F.percent(0.000996), '0.1%');
});

test('values in their units', () => {
    assert.equal(F.value(512, 'bytes'), '512 B');
    assert.equal(F.value(3 * 1024 * 1024, 'bytes'), '3.00 MiB');
    assert.equal(F.value(1500000, 'nanoseconds'), '1.50 ms');
    assert.equal(F.value(1234567, 'count'), '1,234,567');
});

test('line heat reads NN.N% · M samples', () => {
    assert.equal(F.heat(0.421, 42), '42.1% · 42 samples');
    assert.equal(F.heat(0.01, 1), '1.0% · 1 sample');
    assert.equal(F.heat(0.5, 3, '4.00 MiB'), '50.0% · 4.00 MiB');
});
