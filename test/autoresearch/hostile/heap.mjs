// Grows the JS heap without bound: the heap cap (--max-old-space-size) or the address-space cap stops it (outcome 'memory').
const keep = [];
for (;;) keep.push(Array.from({ length: 1 << 16 }, (_, i) => ({ i })));
