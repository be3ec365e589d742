// The alerts page: every alert of the agents' history (host, case, branch,
// range, gain, culprit or findings, state and triage, each comparison
// linked to its receipt), filters that are the API's, and a triage form
// that sends a maintainer's token typed here (kept in this module's memory
// alone, never stored) to POST /api/v1/alerts/ID/triage.
import { API, getJSON, h, link, pct, hash, when, param, table, fill, fail, ready } from './common.js';

const STATES = ['', 'confirming', 'raised', 'dismissed'];
const TRIAGES = ['', 'new', 'acknowledged', 'fixed', 'false_alarm'];
let token = '';

function receipt(id, text) {
	return id ? link('comparison.html', { id }, text || '#' + id) : h('span', { class: 'muted' }, '\u2014');
}

function findings(a) {
	if (!a.findings.length)
		return h('span', { class: 'muted' }, a.bisect === 'running' ? 'bisecting' : 'none yet');
	return a.findings.map((f, i) => h('div', {},
		f.what === 'commit' ? ['culprit ', hash(f.hi, 12)]
			: ['range ', hash(f.lo, 12), '..', hash(f.hi, 12), ` (${f.commits} commits)`],
		f.gain === null ? null : [' ', h('span', { class: 'num' }, pct(f.gain))],
		f.comparison ? [' ', receipt(f.comparison)] : null,
		f.note ? h('div', { class: 'muted' }, f.note) : null));
}

function rows(list) {
	return list.map((a) => [
		[String(a.id), '.num'],
		h('strong', {}, a.host),
		link('timeline.html', { host: a.host, case: a.case }, a.case),
		a.branch,
		[hash(a.lo, 12), '..', hash(a.hi, 12), h('div', { class: 'muted' }, `${a.commits} commit${a.commits === 1 ? '' : 's'}, by ${a.found_by}`)],
		[pct(a.gain), '.num'],
		findings(a),
		[a.state, a.bisect !== 'none' ? h('div', { class: 'muted' }, 'bisect: ' + a.bisect) : null],
		[h('span', { class: 'triage-' + a.triage }, a.triage),
			a.triage_by ? h('div', { class: 'muted' }, 'by ', a.triage_by, ' ', when(a.triage_at)) : null,
			a.fixed_by ? h('div', {}, 'fixed by ', receipt(a.fixed_by)) : null],
		[receipt(a.comparison, 'found'), a.confirm ? [', ', receipt(a.confirm, 'confirmed')] : null],
	]);
}

function select(name, words, value) {
	return h('label', {}, name + ' ', h('select', { name },
		words.map((w) => h('option', { value: w, selected: w === (value || '') }, w || 'any'))));
}

function filterForm() {
	return [
		h('label', {}, 'host ', h('input', { name: 'host', value: param('host') || '', size: 12 })),
		' ', h('label', {}, 'case ', h('input', { name: 'case', value: param('case') || '', size: 12 })),
		' ', select('state', STATES, param('state')), ' ', select('triage', TRIAGES, param('triage')),
		' ', h('button', { type: 'submit' }, 'Filter'),
	];
}

async function load() {
	const q = new URLSearchParams();
	for (const k of ['host', 'case', 'state', 'triage'])
		if (param(k))
			q.set(k, param(k));
	q.set('limit', '500');
	const d = await getJSON('/alerts?' + q.toString());
	fill('alerts', d.alerts.length
		? table([['Alert', '.num'], 'Host', 'Case (timeline)', 'Branch', 'Range', ['Gain', '.num'],
			'Culprit or findings', 'State', 'Triage', 'Receipts'], rows(d.alerts), 'alerts')
		: h('p', { class: 'muted' }, 'No alert matches.'));
}

async function sendTriage(ev) {
	ev.preventDefault();
	const f = ev.target;
	const out = document.getElementById('triage-result');
	token = f.elements.token.value.trim() || token;
	f.elements.token.value = '';
	const body = { triage: f.elements.state.value };
	if (f.elements.fixed_by.value.trim())
		body.fixed_by = Number(f.elements.fixed_by.value.trim());
	const res = await fetch(`${API}/alerts/${encodeURIComponent(f.elements.alert.value.trim())}/triage`, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + token },
		body: JSON.stringify(body),
	});
	let d = null;
	try {
		d = await res.json();
	} catch (e) {
		d = null;
	}
	out.replaceChildren(document.createTextNode(res.ok
		? `alert ${d.alert}: ${d.triage}, by ${d.triage_by}`
		: `${res.status}: ${d && typeof d.error === 'string' ? d.error : res.statusText}`));
	out.dataset.status = String(res.status);
	if (res.ok)
		await load();
}

async function main() {
	fill('filters', filterForm());
	fill('triage', [
		h('label', {}, 'alert ', h('input', { name: 'alert', size: 6, required: true })),
		' ', select('state', TRIAGES.slice(1), 'acknowledged'),
		' ', h('label', {}, 'fixed by comparison ', h('input', { name: 'fixed_by', size: 6 })),
		' ', h('label', {}, 'maintainer token ', h('input', { name: 'token', type: 'password', autocomplete: 'off', size: 20 })),
		' ', h('button', { type: 'submit' }, 'Set'),
	]);
	document.getElementById('triage').addEventListener('submit', (ev) => sendTriage(ev).catch(fail));
	await load();
}

main().catch(fail).finally(ready);
