/**
 * The longest id a client may name, in characters: owner, asset and session ids in events,
 * and every id in a URL path (the router's parameter limit). One limit, so whatever ingest
 * accepts can be read back by its own route.
 */
export const MAX_ID_LENGTH = 256;
