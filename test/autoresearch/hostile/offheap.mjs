// Grows off-heap memory (Buffers are outside the JS heap) without bound: only the address-space cap stops it (outcome 'memory').
const keep = [];
for (;;) keep.push(Buffer.alloc(32 << 20, 1));
