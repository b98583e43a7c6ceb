/**
 * Deterministic layout of the concept graph, computed at build time (no client script).
 * Nodes start on a circle (ordered by category, then id) and a fixed number of
 * Fruchterman-Reingold steps with a cooling schedule pulls related concepts together.
 * No randomness: the same graph always yields the same picture.
 */
export interface LayoutNode {
  id: string;
  label: string;
  type: string;
  ring: string;
  weight: number;
  category?: string;
}

export interface PlacedNode extends LayoutNode {
  x: number;
  y: number;
  r: number;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: { a: PlacedNode; b: PlacedNode }[];
}

export function layoutGraph(
  inputNodes: readonly LayoutNode[],
  inputEdges: readonly (readonly [string, string])[],
  options: { width?: number; height?: number; iterations?: number } = {},
): GraphLayout {
  const width = options.width ?? 960;
  const height = options.height ?? 640;
  const iterations = options.iterations ?? 400;
  const margin = 70;
  const nodes = [...inputNodes].sort((a, b) => (a.category ?? '').localeCompare(b.category ?? '') || a.id.localeCompare(b.id));
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const edges = inputEdges
    .map(([a, b]) => [index.get(a), index.get(b)] as const)
    .filter((pair): pair is readonly [number, number] => pair[0] !== undefined && pair[1] !== undefined && pair[0] !== pair[1]);

  const n = nodes.length;
  const cx = width / 2;
  const cy = height / 2;
  const radius = Math.min(width, height) / 2 - margin;
  const x = nodes.map((_, i) => cx + radius * Math.cos((2 * Math.PI * i) / Math.max(n, 1) - Math.PI / 2));
  const y = nodes.map((_, i) => cy + radius * Math.sin((2 * Math.PI * i) / Math.max(n, 1) - Math.PI / 2));

  if (n > 1) {
    const area = (width - 2 * margin) * (height - 2 * margin);
    const k = 0.9 * Math.sqrt(area / n);
    let temperature = Math.min(width, height) / 8;
    const cooling = temperature / (iterations + 1);
    for (let step = 0; step < iterations; step++) {
      const dx = new Array<number>(n).fill(0);
      const dy = new Array<number>(n).fill(0);
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          let ddx = x[i]! - x[j]!;
          let ddy = y[i]! - y[j]!;
          let dist = Math.hypot(ddx, ddy);
          if (dist < 0.01) {
            // Coincident nodes: separate them along a fixed, index-derived direction.
            ddx = Math.cos(i + j);
            ddy = Math.sin(i + j);
            dist = 0.01;
          }
          const force = (k * k) / dist;
          dx[i]! += (ddx / dist) * force;
          dy[i]! += (ddy / dist) * force;
          dx[j]! -= (ddx / dist) * force;
          dy[j]! -= (ddy / dist) * force;
        }
      }
      for (const [a, b] of edges) {
        const ddx = x[a]! - x[b]!;
        const ddy = y[a]! - y[b]!;
        const dist = Math.max(Math.hypot(ddx, ddy), 0.01);
        const force = (dist * dist) / k;
        dx[a]! -= (ddx / dist) * force;
        dy[a]! -= (ddy / dist) * force;
        dx[b]! += (ddx / dist) * force;
        dy[b]! += (ddy / dist) * force;
      }
      for (let i = 0; i < n; i++) {
        // Weak gravity keeps disconnected nodes on the canvas.
        dx[i]! += ((cx - x[i]!) * 0.02 * k) / 10;
        dy[i]! += ((cy - y[i]!) * 0.02 * k) / 10;
        const move = Math.hypot(dx[i]!, dy[i]!);
        if (move > 0) {
          const limited = Math.min(move, temperature);
          x[i] = x[i]! + (dx[i]! / move) * limited;
          y[i] = y[i]! + (dy[i]! / move) * limited;
        }
        x[i] = Math.min(width - margin, Math.max(margin, x[i]!));
        y[i] = Math.min(height - margin / 2, Math.max(margin / 2, y[i]!));
      }
      temperature -= cooling;
    }
  }

  const maxWeight = Math.max(1, ...nodes.map((node) => node.weight));
  const placed: PlacedNode[] = nodes.map((node, i) => ({
    ...node,
    x: round(x[i]!),
    y: round(y[i]!),
    r: round(6 + 10 * Math.sqrt(node.weight / maxWeight)),
  }));
  return {
    width,
    height,
    nodes: placed,
    edges: edges.map(([a, b]) => ({ a: placed[a]!, b: placed[b]! })),
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
