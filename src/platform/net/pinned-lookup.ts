import type { LookupAddress, LookupOptions } from 'node:dns';

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** The `lookup` signature `net.connect` and `tls.connect` accept. */
export type SocketLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * A socket `lookup` that answers every host name with the address the SSRF guard checked, so the
 * connection cannot be steered elsewhere by a second DNS answer (rebinding). TLS still verifies the
 * certificate against the URL's host name, since the host name itself is left untouched.
 */
export const pinnedLookup =
  (address: string, family: 4 | 6): SocketLookup =>
  (_hostname, options, callback) => {
    if (options.all === true) {
      callback(null, [{ address, family }]);
    } else {
      callback(null, address, family);
    }
  };
