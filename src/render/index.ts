// render: the 64x64 CPU rasterizer for policy cameras. Browser-safe; must not import physics internals.
export {};
