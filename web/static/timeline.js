// The timeline of one host and case: the gain median of each comparison in
// time order, every raw process value beside it, and the changes of the
// fingerprint marked between comparisons. Chart.js (the core package
// alone) draws it; the marker is a dataset of vertical segments.
import { API, getJSON, h, link, param, pct, num, hash, when, verdict, table, fill, fail, ready, fingerprintDiff } from './common.js';

const OFFSET = 0.14;   // old values drawn left of their comparison, new right

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

function draw(canvas, points, changes, metric) {
	const gains = points.map((p) => (p.gain === null ? null : p.gain * 100));
	const finite = gains.filter((g) => g !== null);
	let lo = Math.min(0, ...finite), hi = Math.max(0, ...finite);
	// Round outward to a step of the axis, so the marker spans the chart.
	const step = 10 ** Math.floor(Math.log10(Math.max(hi - lo, 1)));
	lo = Math.floor((lo - (hi - lo) * 0.05) / step) * step;
	hi = Math.ceil((hi + (hi - lo) * 0.05) / step) * step;
	const raw = { old: [], new: [] };
	points.forEach((p, i) => {
		for (const v of p.values) {
			// Warm-ups (pair 0) take part in no figure: not drawn.
			if (v.value === null || v.pair === 0)
				continue;
			raw[v.arm === 'old' ? 'old' : 'new'].push({
				x: i + (v.arm === 'old' ? -OFFSET : OFFSET), y: v.value,
				note: `#${p.id} seq ${v.seq}, ${v.arm}, pair ${v.pair}: ${num(v.value)} ${metric}${v.valid ? '' : ' (invalid)'}`,
				valid: v.valid,
			});
		}
	});
	const marks = [];
	for (const c of changes) {
		const x = c.index - 0.5;
		const note = `fingerprint ${c.from.fingerprint_hash ?? 'none'} \u2192 ${c.to.fingerprint_hash ?? 'none'}: ` +
			(c.diff.length ? c.diff.slice(0, 4).join('; ') + (c.diff.length > 4 ? `; and ${c.diff.length - 4} more` : '') : 'changed');
		marks.push({ x, y: lo, note }, { x, y: hi, note, top: true }, { x, y: null });
	}
	const changed = new Set(changes.map((c) => c.index));
	const pointStyle = (ctx) => (ctx.raw && ctx.raw.valid === false ? 'crossRot' : 'circle');
	return new Chart(canvas, {
		type: 'scatter',
		data: {
			datasets: [
				{
					label: 'gain median (%)', type: 'line', yAxisID: 'gain', order: 0,
					data: points.map((p, i) => ({ x: i, y: gains[i], note: `#${p.id} ${p.head ?? ''}: gain ${pct(p.gain)} (${p.verdict ?? 'no verdict'})` })),
					borderColor: '#1b1b1b', backgroundColor: '#1b1b1b', borderWidth: 2, pointRadius: 4,
					spanGaps: false,
				},
				{
					label: `old values (${metric})`, yAxisID: 'value', data: raw.old, order: 2,
					borderColor: '#1f5fa8', backgroundColor: 'rgba(31,95,168,0.55)', pointRadius: 3.5, pointStyle,
				},
				{
					label: `new values (${metric})`, yAxisID: 'value', data: raw.new, order: 2,
					borderColor: '#c2410c', backgroundColor: 'rgba(194,65,12,0.55)', pointRadius: 3.5, pointStyle,
				},
				{
					label: 'fingerprint change', type: 'line', yAxisID: 'gain', data: marks, order: 1,
					borderColor: '#7c3aed', backgroundColor: '#7c3aed', borderWidth: 2, borderDash: [6, 4],
					// A triangle at the top end names the line in the legend's colour.
					pointRadius: (ctx) => (ctx.raw && ctx.raw.top ? 7 : 0), pointHitRadius: 8,
					pointStyle: 'triangle', rotation: 180, spanGaps: false,
				},
			],
		},
		options: {
			animation: false,
			maintainAspectRatio: false,
			interaction: { mode: 'nearest', intersect: true },
			scales: {
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
							return lines;
						},
					},
					title: { display: true, text: 'comparisons, oldest first' },
				},
				gain: { type: 'linear', position: 'left', min: lo, max: hi, title: { display: true, text: 'gain median (%)' } },
				value: { type: 'linear', position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: metric } },
			},
			plugins: {
				legend: { position: 'bottom' },
				tooltip: { callbacks: { label: (ctx) => (ctx.raw && ctx.raw.note) || '' } },
			},
		},
	});
}

async function main() {
	const host = param('host'), kase = param('case');
	if (!host || !kase)
		throw new Error('this page needs ?host=NAME&case=NAME');
	const q = new URLSearchParams({ host, case: kase }).toString();
	document.getElementById('csv-link').setAttribute('href', `${API}/timeline?${q}&format=csv`);
	document.getElementById('json-link').setAttribute('href', `${API}/timeline?${q}`);
	const t = await getJSON(`/timeline?${q}&limit=1000`);
	const points = t.points.slice().sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id));
	document.title = `perfd: ${kase} on ${host}`;
	fill('title', `Timeline: ${kase} on ${host}`);
	if (!points.length) {
		fill('points', h('p', { class: 'muted' }, 'No comparison of this case on this host is stored.'));
		fill('changes', '');
		return;
	}
	const metric = points.find((p) => p.metric)?.metric ?? 'value';
	const changes = changesOf(points);
	draw(document.getElementById('chart'), points, changes, metric);
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
}

main().catch(fail).finally(ready);
