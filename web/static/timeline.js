// The timeline of one host and case: the gain median of each comparison in
// time order, every raw process value beside it, the changes of the
// fingerprint marked between comparisons, and the change points of the
// default branch's series (GET /api/v1/changepoints) marked before the
// comparison that starts each new level. Chart.js (the core package alone)
// draws it; each kind of marker is a dataset of vertical segments, and a
// change point's label is drawn by a small plugin of this page. Each axis
// fits the bulk of its points (axis.js): a point beyond it is drawn at the
// edge, and a box shows the whole range.
//   timeline.html?host=H&case=C                  one host
//   timeline.html?host=H&case=C&also=B&also=D    hosts overlaid: each one's
//     gain medians in time, a line per host (a parameter per host, so a
//     name may hold any character)
import { API, getJSON, h, link, pageURL, param, pct, num, hash, when, verdict, table, fill, fail, ready, fingerprintDiff } from './common.js';
import { axisRange, place, gainFloor, valueFloor, clippedStyle, clippedLabels } from './axis.js';

const OVERLAY_MAX = 8;   // hosts drawn in one chart
const COLOURS = ['#1b1b1b', '#1f5fa8', '#c2410c', '#15803d', '#7c3aed', '#b45309', '#0e7490', '#be185d'];

const OFFSET = 0.14;   // old values drawn left of their comparison, new right
const CP_COLOUR = '#047857';   // change points: solid, apart from the dashed purple fingerprint line

// A change as a signed percentage with three decimals ("+9.870%").
function shift(c) {
	return c === null || c === undefined || !Number.isFinite(c) ? 'n/a' : (c > 0 ? '+' : '') + pct(c);
}

// The level before and after a change point, in the series' unit.
function levels(cp, metric) {
	return `${num(cp.mean_before)} \u2192 ${num(cp.mean_after)} ${metric}`;
}

// Draws each change point's label (its levels and shift) beside the top of
// its line. Canvas text: nothing of it is markup.
const changeLabels = {
	id: 'changeLabels',
	afterDatasetsDraw(chart) {
		const ds = chart.data.datasets.findIndex((d) => d.label === 'change point');
		if (ds < 0 || !chart.isDatasetVisible(ds))
			return;
		const { ctx, chartArea } = chart;
		const x = chart.scales.x;
		ctx.save();
		ctx.font = '600 12px system-ui, sans-serif';
		ctx.textBaseline = 'top';
		let row = 0;
		for (const m of chart.data.datasets[ds].data) {
			if (!m.top)
				continue;
			const px = x.getPixelForValue(m.x);
			const w = ctx.measureText(m.label).width;
			// Right of the line, or left of it near the chart's right edge;
			// rows alternate so that close change points do not overwrite.
			const left = px + 6 + w > chartArea.right ? px - 6 - w : px + 6;
			const py = chartArea.top + 16 + (row++ % 2) * 16;
			ctx.fillStyle = 'rgba(255,255,255,0.85)';
			ctx.fillRect(left - 2, py - 1, w + 4, 15);
			ctx.fillStyle = CP_COLOUR;
			ctx.fillText(m.label, left, py);
		}
		ctx.restore();
	},
};

// The API sends a point's whole fingerprint only where it differs from the
// point before (its hash always): carry the last one forward.
function changesOf(points) {
	const out = [];
	let last = points.length ? points[0].fingerprint : null;
	for (let i = 1; i < points.length; i++) {
		const a = points[i - 1], b = points[i];
		if (a.fingerprint_hash !== b.fingerprint_hash)
			out.push({ index: i, from: a, to: b, diff: fingerprintDiff(last, b.fingerprint) });
		if (b.fingerprint !== null)
			last = b.fingerprint;
	}
	return out;
}

const ARROW = { above: '\u25b2', below: '\u25bc' };
const BEYOND = ', beyond the axis: drawn at its edge';

// The gain axis of the gains (in %, null for none): fitted to their bulk
// and 0 (axis.js), or to all of them when whole; rounded outward to a step
// of the axis, so that a vertical marker spans the chart.
function gainAxis(gains, whole) {
	const r = axisRange(gains, gainFloor, whole, [0]);
	const step = 10 ** Math.floor(Math.log10(Math.max(r.max - r.min, 1)));
	return { ...r, min: Math.floor(r.min / step) * step, max: Math.ceil(r.max / step) * step };
}

// A point of a gain line: at its place or its axis's edge, with its note.
function gainPoint(x, g, r, note) {
	const at = place(g === null ? null : g * 100, r);
	return {
		x, y: at.y, beyond: at.beyond, outside: at.outside, note: note + (at.beyond ? BEYOND : ''),
		clipLabel: at.beyond ? `${ARROW[at.beyond]} gain ${pct(g)}` : undefined,
	};
}

// Every pair process's value (warm-ups, pair 0, take part in no figure: not
// drawn), old left of its comparison and new right, on the value axis r;
// clipped lists each comparison's values outside its fence, per arm and
// side, and where they are drawn at the edge the farthest is labelled.
function rawPoints(points, metric, r, clipped) {
	const raw = { old: [], new: [] };
	points.forEach((p, i) => {
		const far = new Map();
		for (const v of p.values) {
			if (v.value === null || v.pair === 0)
				continue;
			const at = place(v.value, r);
			const pt = {
				x: i + (v.arm === 'old' ? -OFFSET : OFFSET), y: at.y, beyond: at.beyond, valid: v.valid,
				note: `#${p.id} seq ${v.seq}, ${v.arm}, pair ${v.pair}: ${num(v.value)} ${metric}${v.valid ? '' : ' (invalid)'}` +
					(at.beyond ? BEYOND : ''),
			};
			raw[v.arm === 'old' ? 'old' : 'new'].push(pt);
			if (!at.outside)
				continue;
			const key = `${v.arm} ${at.outside}`;
			const f = far.get(key) || { arm: v.arm, side: at.outside, values: [], pt, value: v.value };
			f.values.push(v.value);
			if (at.outside === 'above' ? v.value > f.value : v.value < f.value)
				Object.assign(f, { pt, value: v.value });
			far.set(key, f);
		}
		for (const f of far.values()) {
			const lo = Math.min(...f.values), hi = Math.max(...f.values);
			if (f.pt.beyond)
				f.pt.clipLabel = `${ARROW[f.side]} ${f.arm} ${num(f.value)} ${metric}`;
			clipped.push({ id: p.id, side: f.side, text: `${f.arm} values of #${p.id}: ` +
				(lo === hi ? num(lo) : `${f.values.length} from ${num(lo)} to ${num(hi)}`) + ` ${metric}` });
		}
	});
	return raw;
}

// The options both charts share, around their own scales: drawn at once,
// the box's height, each point's note as its tooltip, the legend under it.
function chartOptions(scales) {
	return {
		animation: false,
		maintainAspectRatio: false,
		interaction: { mode: 'nearest', intersect: true },
		scales,
		plugins: {
			legend: { position: 'bottom' },
			tooltip: { callbacks: { label: (ctx) => (ctx.raw && ctx.raw.note) || '' } },
		},
	};
}

// cps: the change points drawn, each with at (its comparison's index in
// points). whole: every point at its place, none clipped. Returns the chart
// and what lies beyond its axes (rangeNote's list).
function draw(canvas, points, changes, metric, cps, whole) {
	const gr = gainAxis(points.map((p) => (p.gain === null ? null : p.gain * 100)), whole);
	const lo = gr.min, hi = gr.max;
	const values = points.flatMap((p) => p.values.filter((v) => v.value !== null && v.pair !== 0).map((v) => v.value));
	const vr = axisRange(values, valueFloor, whole);
	const clipped = [];
	const gainData = points.map((p, i) => gainPoint(i, p.gain, gr,
		`#${p.id} ${p.head ?? ''}: gain ${pct(p.gain)} (${p.verdict ?? 'no verdict'})`));
	gainData.forEach((d, i) => {
		if (d.outside)
			clipped.push({ id: points[i].id, side: d.outside, text: `gain of #${points[i].id}: ${pct(points[i].gain)}` });
	});
	const raw = rawPoints(points, metric, vr, clipped);
	// The value axis keeps Chart.js's own range unless a value is clipped.
	const valueClipped = raw.old.some((v) => v.beyond) || raw.new.some((v) => v.beyond);
	const marks = [];
	for (const c of changes) {
		const x = c.index - 0.5;
		const note = `fingerprint ${c.from.fingerprint_hash ?? 'none'} \u2192 ${c.to.fingerprint_hash ?? 'none'}: ` +
			(c.diff.length ? c.diff.slice(0, 4).join('; ') + (c.diff.length > 4 ? `; and ${c.diff.length - 4} more` : '') : 'changed');
		marks.push({ x, y: lo, note }, { x, y: hi, note, top: true }, { x, y: null });
	}
	const cpMarks = [];
	for (const cp of cps) {
		const x = cp.at - 0.5;
		const note = `change point at #${cp.comparison} (${(cp.commit ?? 'no commit').slice(0, 12)}): ` +
			`${levels(cp, metric)} (${shift(cp.change)}), p = ${num(cp.p)}; ` +
			(cp.fingerprint_changed ? 'the fingerprint changed here too' : 'the fingerprint is the same');
		const label = `${levels(cp, metric)} (${shift(cp.change)})`;
		cpMarks.push({ x, y: lo, note }, { x, y: hi, note, top: true, label }, { x, y: null });
	}
	const changed = new Set(changes.map((c) => c.index));
	const starts = new Set(cps.map((c) => c.at));
	const pointStyle = (ctx) => (ctx.raw && ctx.raw.valid === false ? 'crossRot' : 'circle');
	const chart = new Chart(canvas, {
		type: 'scatter',
		data: {
			datasets: [
				{
					label: 'gain median (%)', type: 'line', yAxisID: 'gain', order: 0, data: gainData,
					borderColor: '#1b1b1b', backgroundColor: '#1b1b1b', borderWidth: 2,
					...clippedStyle('circle', 4, '#1b1b1b', '#1b1b1b'), spanGaps: false,
				},
				{
					label: `old values (${metric})`, yAxisID: 'value', data: raw.old, order: 2,
					borderColor: '#1f5fa8', backgroundColor: 'rgba(31,95,168,0.55)',
					...clippedStyle(pointStyle, 3.5, 'rgba(31,95,168,0.55)', '#1f5fa8'),
				},
				{
					label: `new values (${metric})`, yAxisID: 'value', data: raw.new, order: 2,
					borderColor: '#c2410c', backgroundColor: 'rgba(194,65,12,0.55)',
					...clippedStyle(pointStyle, 3.5, 'rgba(194,65,12,0.55)', '#c2410c'),
				},
				{
					label: 'fingerprint change', type: 'line', yAxisID: 'gain', data: marks, order: 1,
					borderColor: '#7c3aed', backgroundColor: '#7c3aed', borderWidth: 2, borderDash: [6, 4],
					// A triangle at the top end names the line in the legend's colour.
					pointRadius: (ctx) => (ctx.raw && ctx.raw.top ? 7 : 0), pointHitRadius: 8,
					pointStyle: 'triangle', rotation: 180, spanGaps: false,
				},
				{
					label: 'change point', type: 'line', yAxisID: 'gain', data: cpMarks, order: 1,
					borderColor: CP_COLOUR, backgroundColor: CP_COLOUR, borderWidth: 3,
					// A diamond at the top end, under the fingerprint's triangle.
					pointRadius: (ctx) => (ctx.raw && ctx.raw.top ? 6 : 0), pointHitRadius: 8,
					pointStyle: 'rectRot', spanGaps: false, clip: 8,
				},
			],
		},
		plugins: [changeLabels, clippedLabels],
		options: chartOptions({
			x: {
				type: 'linear', min: -0.6, max: points.length - 0.4,
				ticks: {
					stepSize: 1, autoSkip: true,
					callback: (v) => {
						const p = Number.isInteger(v) ? points[v] : null;
						if (!p)
							return '';
						const lines = [`#${p.id}`, (p.head ?? 'by hand').split('/').pop().slice(0, 24)];
						if (changed.has(v))
							lines.push('\u25bc fingerprint changed');
						if (starts.has(v))
							lines.push('\u25c6 change point');
						return lines;
					},
				},
				title: { display: true, text: 'comparisons, oldest first' },
			},
			gain: { type: 'linear', position: 'left', min: lo, max: hi, title: { display: true, text: 'gain median (%)' } },
			value: {
				type: 'linear', position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: metric },
				min: valueClipped ? vr.min : undefined, max: valueClipped ? vr.max : undefined,
			},
		}),
	});
	return { chart, clipped };
}

// The change points section: how they were found, a note when the page
// shows comparisons of other heads, and a row per change point. cp is
// /api/v1/changepoints' answer, points the page's, at maps a comparison id
// to its index in points.
function changepointsSection(cp, points, at) {
	const m = cp.method;
	const metric = cp.series.metric ?? 'value';
	const out = [h('p', { class: 'note', id: 'cp-method' },
		`Sought in the series of branch ${cp.branch} on this host: the head median of each done comparison of its head jobs, ` +
		`in job order (the newest ${m.max_points}), by ${m.name} version ${m.version}: ` +
		`E-divisive means with alpha ${m.alpha}, at least ${m.min_segment} points either side of a change, ` +
		`${m.permutations} permutations (seed ${m.seed}), a change kept when p < ${m.p_threshold}, ` +
		`at most ${m.max_changepoints}. Only the default branch's series has them.` +
		(cp.series.points ? ` This one has ${cp.series.points} points of ${metric}.` : ''))];
	const others = points.filter((p) => p.head !== cp.branch);
	if (others.length) {
		const heads = [...new Set(others.map((p) => p.head ?? 'by hand'))];
		out.push(h('p', { class: 'note', id: 'cp-branch' },
			`${others.length} of the ${points.length} comparisons shown are not of branch ${cp.branch} ` +
			`(${heads.slice(0, 5).join(', ')}${heads.length > 5 ? `, and ${heads.length - 5} more` : ''}): ` +
			'they take no part in its change points.'));
	}
	if (!cp.changepoints.length) {
		out.push(h('p', { class: 'muted', id: 'no-changepoints' },
			cp.note ? `No change point: ${cp.note}.` : 'No change point: the series keeps one level.'));
		return out;
	}
	out.push(table(['Commit', 'Receipt', 'Place', ['Level before', '.num'], ['Level after', '.num'], ['Shift', '.num'], ['p', '.num'], 'Fingerprint'],
		cp.changepoints.map((c) => [
			c.commit ? link('head.html', { commit: c.commit }, hash(c.commit, 12)) : hash(null),
			link('comparison.html', { id: c.comparison }, '#' + c.comparison),
			`point ${c.index + 1} of ${cp.series.points}` + (at.has(c.comparison) ? '' : ' (not among the comparisons drawn)'),
			[`${num(c.mean_before)} ${metric}`, '.num'], [`${num(c.mean_after)} ${metric}`, '.num'],
			[shift(c.change), '.num'], [num(c.p), '.num'],
			c.fingerprint_changed ? h('span', { class: 'flag' }, 'changed here') : 'same',
		]), 'changepoints'));
	return out;
}

const byTime = (a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id);

// Each host's gain medians on one time axis, a line per host; the axis
// fits the bulk of every host's gains unless whole. Returns the chart and
// what lies beyond its axis (rangeNote's list).
function drawOverlay(canvas, series, whole) {
	const gr = axisRange(series.flatMap((s) => s.points.map((p) => (p.gain === null ? null : p.gain * 100))),
		gainFloor, whole);
	const clipped = [];
	const datasets = series.map((s, i) => ({
		label: s.host, type: 'line', yAxisID: 'gain',
		data: s.points.map((p) => {
			const d = gainPoint(Date.parse(p.created_at), p.gain, gr,
				`${s.host} #${p.id} ${p.head ?? ''}: gain ${pct(p.gain)} (${p.verdict ?? 'no verdict'})`);
			if (d.outside)
				clipped.push({ id: p.id, side: d.outside, text: `gain of ${s.host} #${p.id}: ${pct(p.gain)}` });
			return d;
		}),
		borderColor: COLOURS[i % COLOURS.length], backgroundColor: COLOURS[i % COLOURS.length], borderWidth: 2,
		...clippedStyle('circle', 4, COLOURS[i % COLOURS.length], COLOURS[i % COLOURS.length]), spanGaps: false,
	}));
	// Seconds on the axis only when the comparisons lie within an hour.
	const xs = series.flatMap((s) => s.points.map((p) => Date.parse(p.created_at)));
	const cut = xs.length && Math.max(...xs) - Math.min(...xs) < 3600e3 ? 19 : 16;
	const stamp = (v) => new Date(v).toISOString().replace('T', ' ').slice(0, cut) + 'Z';
	const chart = new Chart(canvas, {
		type: 'scatter',
		data: { datasets },
		plugins: [clippedLabels],
		options: chartOptions({
			x: { type: 'linear', ticks: { callback: stamp, maxRotation: 0, autoSkip: true }, title: { display: true, text: 'when the comparison started (UTC)' } },
			gain: {
				type: 'linear', position: 'left', title: { display: true, text: 'gain median (%)' },
				min: clipped.length && !whole ? gr.min : undefined, max: clipped.length && !whole ? gr.max : undefined,
			},
		}),
	});
	return { chart, clipped };
}

// What lies beyond the axes fitted to the bulk, and the box that shows the
// whole range: each such point's true value, in the page as text (the
// chart labels it too). redraw(whole) draws the chart anew and calls this
// again.
function rangeNote(clipped, whole, redraw) {
	if (!clipped.length)
		return null;
	return h('div', { class: 'range' },
		h('p', { class: 'note', id: 'clipped' }, whole
			? 'The whole range: every point at its value. Fitted to the bulk of the points, the axes would leave out:'
			: 'The axes fit the bulk of the points; what lies beyond them is drawn at the chart\'s edge ' +
				'as a red triangle pointing the way it lies, its value beside it:'),
		h('ul', { id: 'clipped-list' }, clipped.map((c) => h('li', { 'data-id': c.id, 'data-side': c.side },
			`${ARROW[c.side]} ${c.text}`))),
		h('label', {}, h('input', { type: 'checkbox', id: 'whole-range', checked: whole,
			onclick: (e) => redraw(e.target.checked) }), ' Show the whole range'));
}

// Draws with make(whole) and keeps #range saying what lies beyond the axes.
function drawRanged(make) {
	let chart = null;
	const redraw = (whole) => {
		if (chart)
			chart.destroy();
		const r = make(whole);
		chart = r.chart;
		fill('range', rangeNote(r.clipped, whole, redraw));
	};
	redraw(false);
}

// The hosts among the case's newest comparisons, as boxes to tick: each
// one ticked is drawn with the page's host.
async function overlayControl(host, kase, also) {
	const recent = (await getJSON(`/comparisons?${new URLSearchParams({ case: kase, limit: 500 })}`)).comparisons;
	const others = [...new Set(recent.filter((c) => c.kind !== 'aa').map((c) => c.host))].filter((x) => x !== host).sort();
	for (const a of also)
		if (!others.includes(a))
			others.push(a);
	if (!others.length) {
		fill('overlay', h('p', { class: 'muted' }, 'No other host has a comparison of this case among its newest.'));
		return;
	}
	const go = () => {
		const ticked = [...document.querySelectorAll('#overlay input[type=checkbox]:checked')].map((e) => e.value);
		location.href = pageURL('timeline.html', [['host', host], ['case', kase], ...ticked.map((x) => ['also', x])]);
	};
	fill('overlay', h('fieldset', { class: 'overlay' }, h('legend', {}, 'Overlay other hosts of this case'),
		others.map((x) => h('label', {}, h('input', { type: 'checkbox', value: x, checked: also.includes(x), onclick: go }), ' ', x))));
}

async function overlay(host, kase, also) {
	const hosts = [host, ...also];
	const series = await Promise.all(hosts.map(async (x) => ({
		host: x,
		points: (await getJSON(`/timeline?${new URLSearchParams({ host: x, case: kase })}&limit=1000`)).points.slice().sort(byTime),
	})));
	document.title = `perfd: ${kase} on ${hosts.join(', ')}`;
	fill('title', `Timeline: ${kase} on ${hosts.join(', ')}`);
	drawRanged((whole) => drawOverlay(document.getElementById('chart'), series, whole));
	fill('changepoints', h('p', { class: 'muted', id: 'no-changepoints' },
		'Change points are marked on one host\'s timeline: untick the other hosts to see them.'));
	const changes = series.flatMap((s) => changesOf(s.points).map((c) => ({ host: s.host, ...c })));
	fill('changes', changes.length
		? table(['Host', 'Between', 'Fingerprint', 'What changed'], changes.map((c) => [
			c.host,
			[link('comparison.html', { id: c.from.id }, '#' + c.from.id), ' and ', link('comparison.html', { id: c.to.id }, '#' + c.to.id)],
			[hash(c.from.fingerprint_hash), ' \u2192 ', hash(c.to.fingerprint_hash)],
			c.diff.length ? h('ul', {}, c.diff.map((d) => h('li', {}, h('code', {}, d)))) : 'the stored text changed',
		]), 'changes')
		: h('p', { class: 'muted', id: 'no-changes' }, 'Each host\'s fingerprint is the same in every comparison shown.'));
	const all = series.flatMap((s) => s.points.map((p) => ({ host: s.host, ...p }))).sort(byTime);
	fill('points', all.length
		? table(['Host', 'Receipt', 'Created', 'Head', 'Commit', 'Verdict', ['Gain, median', '.num'], ['Old median', '.num'], ['New median', '.num'], 'Fingerprint'],
			all.map((p) => [
				p.host, link('comparison.html', { id: p.id }, '#' + p.id), when(p.created_at),
				p.head ?? h('span', { class: 'muted' }, 'by hand'), hash(p.commit, 12),
				link('comparison.html', { id: p.id }, verdict(p.verdict)), [pct(p.gain), '.num'],
				[num(p.old_median), '.num'], [num(p.new_median), '.num'], hash(p.fingerprint_hash),
			]), 'points')
		: h('p', { class: 'muted' }, 'No comparison of this case on these hosts is stored.'));
}

async function main() {
	const host = param('host'), kase = param('case');
	if (!host || !kase)
		throw new Error('this page needs ?host=NAME&case=NAME');
	const also = [...new Set(new URLSearchParams(location.search).getAll('also'))].filter((x) => x && x !== host);
	if (also.length > OVERLAY_MAX)
		throw new Error(`at most ${OVERLAY_MAX} hosts overlay one another (also=${also.length})`);
	const q = new URLSearchParams({ host, case: kase }).toString();
	document.getElementById('csv-link').setAttribute('href', `${API}/timeline?${q}&format=csv`);
	document.getElementById('json-link').setAttribute('href', `${API}/timeline?${q}`);
	const control = overlayControl(host, kase, also);
	if (also.length) {
		await overlay(host, kase, also);
		await control;
		return;
	}
	const t = await getJSON(`/timeline?${q}&limit=1000`);
	const points = t.points.slice().sort(byTime);
	document.title = `perfd: ${kase} on ${host}`;
	fill('title', `Timeline: ${kase} on ${host}`);
	if (!points.length) {
		fill('points', h('p', { class: 'muted' }, 'No comparison of this case on this host is stored.'));
		fill('changes', '');
		fill('changepoints', '');
		await control;
		return;
	}
	const metric = points.find((p) => p.metric)?.metric ?? 'value';
	const changes = changesOf(points);
	// The default branch's change points, as the API marks them on the
	// points: its refusal is said in the section, and the rest is drawn.
	let cp = null;
	try {
		cp = await getJSON(`/changepoints?${q}`);
	} catch (e) {
		fill('changepoints', h('p', { class: 'result-bad', id: 'cp-error' }, `The change points could not be read: ${e.message}`));
	}
	const at = new Map(points.map((p, i) => [p.id, i]));
	const cps = cp ? cp.changepoints.filter((c) => at.has(c.comparison)).map((c) => ({ ...c, at: at.get(c.comparison) })) : [];
	drawRanged((whole) => draw(document.getElementById('chart'), points, changes, metric, cps, whole));
	if (cp)
		fill('changepoints', changepointsSection(cp, points, at));
	fill('changes', changes.length
		? table(['Between', 'Fingerprint', 'What changed'], changes.map((c) => [
			[link('comparison.html', { id: c.from.id }, '#' + c.from.id), ' and ', link('comparison.html', { id: c.to.id }, '#' + c.to.id)],
			[hash(c.from.fingerprint_hash), ' \u2192 ', hash(c.to.fingerprint_hash)],
			c.diff.length ? h('ul', {}, c.diff.map((d) => h('li', {}, h('code', {}, d)))) : 'the stored text changed',
		]), 'changes')
		: h('p', { class: 'muted', id: 'no-changes' }, 'The fingerprint is the same in every comparison shown.'));
	fill('points', table(['Receipt', 'Created', 'Head', 'Commit', 'Verdict', ['Gain, median', '.num'], [`Old median`, '.num'], [`New median`, '.num'], ['Processes', '.num'], 'Fingerprint'],
		points.map((p) => [
			link('comparison.html', { id: p.id }, '#' + p.id), when(p.created_at),
			p.head ?? h('span', { class: 'muted' }, 'by hand'), hash(p.commit, 12),
			link('comparison.html', { id: p.id }, verdict(p.verdict)), [pct(p.gain), '.num'],
			[num(p.old_median), '.num'], [num(p.new_median), '.num'], [String(p.values.length), '.num'],
			hash(p.fingerprint_hash),
		]), 'points'));
	await control;
}

main().catch(fail).finally(ready);
