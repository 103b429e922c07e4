// protocol: zod payloads and socket.io event maps shared with viewer/. Must not import anything Node-only.
export {};
