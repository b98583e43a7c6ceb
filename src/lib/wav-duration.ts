/**
 * The exact length of a PCM WAV file from its header: the `data` chunk's size over the `fmt `
 * chunk's byte rate. Content declares whole seconds (rounded); the site shows what the file holds.
 * Undefined for anything that is not a well-formed RIFF/WAVE file.
 */
export function wavDuration(bytes: Uint8Array): number | undefined {
  if (bytes.length < 12) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number) => String.fromCharCode(...bytes.subarray(offset, offset + 4));
  if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  for (let offset = 12; offset + 8 <= bytes.length;) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    if (id === 'fmt ' && offset + 20 <= bytes.length) byteRate = view.getUint32(offset + 16, true);
    if (id === 'data') return byteRate ? size / byteRate : undefined;
    // Chunks are padded to an even length.
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

/** A track's length: measured from its local WAV file when there is one, else as declared. */
export function trackSeconds(track: { duration_seconds: number; stream_url?: string | null }, read: (publicPath: string) => Uint8Array | undefined): number {
  const local = track.stream_url?.startsWith('/') && track.stream_url.toLowerCase().endsWith('.wav') ? read(track.stream_url) : undefined;
  return (local && wavDuration(local)) ?? track.duration_seconds;
}
