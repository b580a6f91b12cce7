import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/**
 * Port blocks for tests that must name a range up front (the slicers' ingest ports are a setting,
 * PLAYLINE_SLICER_PORTS, handed to a server before it runs; everything else listens on port 0).
 * They come from one window, PLAYLINE_TEST_PORT_BASE (default 20000) to
 * PLAYLINE_TEST_PORT_BASE + PLAYLINE_TEST_PORT_SPAN (default 12000): a machine or CI job that
 * needs tests elsewhere moves the window with one setting. A block is chosen at random in the
 * window and taken only when every port in it is free (TCP and UDP, checked by binding), so files
 * running at once, or two checkouts testing on one machine, do not start on the same ports.
 */
const BASE = Number(process.env.PLAYLINE_TEST_PORT_BASE ?? 20_000);
const SPAN = Number(process.env.PLAYLINE_TEST_PORT_SPAN ?? 12_000);

const tcpFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });

const udpFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, '0.0.0.0', () => socket.close(() => resolve(true)));
  });

/** The first port of `size` consecutive ports, all free now, from the test port window. */
export async function portBlock(size: number): Promise<number> {
  if (!Number.isInteger(BASE) || !Number.isInteger(SPAN) || BASE < 1024 || SPAN < size || BASE + SPAN > 65_535) {
    throw new Error(`PLAYLINE_TEST_PORT_BASE/PLAYLINE_TEST_PORT_SPAN (${BASE}, ${SPAN}) must name a window of at least ${size} ports within 1024-65535`);
  }
  const blocks = Math.floor(SPAN / size);
  for (let attempt = 0; attempt < 50; attempt++) {
    const start = BASE + Math.floor(Math.random() * blocks) * size;
    const ports = Array.from({ length: size }, (_, i) => start + i);
    const free = await Promise.all(ports.map(async (port) => (await tcpFree(port)) && (await udpFree(port))));
    if (free.every(Boolean)) return start;
  }
  throw new Error(`no ${size} free consecutive ports in ${BASE}-${BASE + SPAN} (PLAYLINE_TEST_PORT_BASE, PLAYLINE_TEST_PORT_SPAN)`);
}
