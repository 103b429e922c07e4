// protocol: zod payloads and socket.io event maps shared by server and viewer/. Must not import anything Node-only.
export * from './schemas.ts';
export type { ClientToServerEvents, ServerToClientEvents } from './events.ts';
