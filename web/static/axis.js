// A chart axis that one far point cannot swamp: its range fits the bulk of
// its points, and a point beyond that range is drawn at the chart's edge
// with a marker of its own and its true value beside it (docs/dashboard.md,
// "Points beyond the axis").
//
// The rule, over the finite values of one axis: m is their median and s
// their robust spread, 1.4826 times the median of |value - m| (the standard
// deviation, were they normal). A value is clipped when it lies further
// from m than the larger of SPREADS times s and the axis's floor: on an
// axis of gains 25 percentage points, on an axis of measured values a
// quarter of |m|. Nothing is clipped when that distance is 0. Half of the
// values can never be clipped, since half lie within s / 1.4826 of m.

const SPREADS = 5;
const MAD_TO_SD = 1.4826;
export const GAIN_FLOOR = 25;            // percentage points
export const VALUE_FLOOR = 0.25;         // of the median's magnitude
const MARGIN = 0.05;                     // of the range, either side
const CLIP_COLOUR = '#b91c1c';

function median(sorted) {
	const n = sorted.length, k = n >> 1;
	return n % 2 ? sorted[k] : (sorted[k - 1] + sorted[k]) / 2;
}

// The values [lo, hi] outside which a value is clipped, or null when none
// is: floor(m) gives the axis's floor for the median m.
export function fence(values, floor) {
	const v = values.filter(Number.isFinite).sort((a, b) => a - b);
	if (!v.length)
		return null;
	const m = median(v);
	const s = MAD_TO_SD * median(v.map((x) => Math.abs(x - m)).sort((a, b) => a - b));
	const w = Math.max(SPREADS * s, floor(m));
	return w > 0 ? { lo: m - w, hi: m + w } : null;
}

export const gainFloor = () => GAIN_FLOOR;
export const valueFloor = (m) => VALUE_FLOOR * Math.abs(m);

// An axis over values: { min, max, fence, whole }, min and max padded by
// MARGIN around the values within the fence (with those of also, e.g. 0,
// always kept), or around every value when whole.
export function axisRange(values, floor, whole, also) {
	const f = fence(values, floor);
	const kept = values.filter((y) => Number.isFinite(y) && (whole || !f || (y >= f.lo && y <= f.hi)));
	const all = [...kept, ...(also || [])];
	if (!all.length)
		return { min: undefined, max: undefined, fence: f, whole };
	let lo = Math.min(...all), hi = Math.max(...all);
	const pad = (hi - lo) * MARGIN || Math.abs(hi) * MARGIN || 1;
	lo -= pad;
	hi += pad;
	return { min: lo, max: hi, fence: f, whole };
}

// Where y is drawn on an axis of range r: outside says which side of the
// fence it lies ('above', 'below', or null within it); beyond, the same
// unless r is whole, that it is drawn at that edge of the axis, not at y.
export function place(y, r) {
	const f = r.fence;
	const outside = !f || y === null || !Number.isFinite(y) ? null : y > f.hi ? 'above' : y < f.lo ? 'below' : null;
	if (!outside || r.whole)
		return { y, beyond: null, outside };
	return { y: outside === 'above' ? r.max : r.min, beyond: outside, outside };
}

// A dataset's point options that mark a clipped point (raw.beyond set) apart:
// a red triangle pointing off the chart, larger than the others; style,
// radius and the colours are the dataset's own for the rest.
export function clippedStyle(style, radius, background, border) {
	const beyond = (ctx) => ctx.raw && ctx.raw.beyond;
	return {
		pointStyle: (ctx) => (beyond(ctx) ? 'triangle' : typeof style === 'function' ? style(ctx) : style),
		rotation: (ctx) => (beyond(ctx) === 'below' ? 180 : 0),
		pointRadius: (ctx) => (beyond(ctx) ? 8 : radius),
		pointBackgroundColor: (ctx) => (beyond(ctx) ? CLIP_COLOUR : background),
		pointBorderColor: (ctx) => (beyond(ctx) ? CLIP_COLOUR : border),
		// The marker sits on the chart's edge: draw it whole.
		clip: 10,
	};
}

// Draws each clipped point's label (raw.clipLabel: its true value) beside
// its marker, inside the chart. Canvas text: nothing of it is markup.
export const clippedLabels = {
	id: 'clippedLabels',
	afterDatasetsDraw(chart) {
		const { ctx, chartArea } = chart;
		ctx.save();
		ctx.font = '600 12px system-ui, sans-serif';
		chart.data.datasets.forEach((d, i) => {
			if (!chart.isDatasetVisible(i))
				return;
			const els = chart.getDatasetMeta(i).data;
			d.data.forEach((p, k) => {
				if (!p || !p.beyond || !p.clipLabel || !els[k])
					return;
				const w = ctx.measureText(p.clipLabel).width;
				const x = Math.min(Math.max(els[k].x + 10, chartArea.left + 2), chartArea.right - w - 4);
				const y = p.beyond === 'above' ? chartArea.top + 12 : chartArea.bottom - 12;
				ctx.textBaseline = 'middle';
				ctx.fillStyle = 'rgba(255,255,255,0.85)';
				ctx.fillRect(x - 2, y - 8, w + 4, 16);
				ctx.fillStyle = CLIP_COLOUR;
				ctx.fillText(p.clipLabel, x, y);
			});
		});
		ctx.restore();
	},
};
