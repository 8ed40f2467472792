import json,sys,os,re,statistics
# above_lines.py DIR: reads ctxsel ask --json outputs (one per question, DIR/N.json) and the documents they name;
# reported in docs/evidence.md, "What lies above a chunk". Python 3, standard library only.
# measure.py DIR: of what `ask --json` sent for each question, how many table rows reach the reader with
# their table's header row above them, and how many passages with the heading of the section their
# first kept text is in
docs={}
def doc(src):
    if src not in docs: docs[src]=open(src,encoding='utf-8').read()
    return docs[src]
rule=re.compile(r'^\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$')
def table_header(text, off):
    # the header line of the table holding the line at byte offset off, or None
    ls=text[:off].split('\n')
    i=len(ls)-1
    while i>0:
        prev=ls[i-1].strip()
        if rule.match(prev):
            return ls[i-2].strip() if i>=2 else None
        if '|' not in prev: return None
        i-=1
    return None
def section(text, off):
    h=None; fence=False
    for l in text[:off].split('\n')[:-1]:
        t=l.lstrip()
        if t.startswith('```') or t.startswith('~~~'): fence=not fence; continue
        if not fence and re.match(r'^#{1,6}[ \t]+\S', l): h=l.strip()
    return h
d=sys.argv[1]
rows=headed=0; secs=known=0; toks=[]; abovetoks=[]; sel=[]; n=0
for f in sorted(os.listdir(d), key=lambda x:int(x.split('.')[0]) if x.endswith('.json') else -1):
    if not f.endswith('.json'): continue
    try: a=json.load(open(os.path.join(d,f)))
    except Exception: continue
    n+=1
    toks.append(a['selection']['tokens']); sel.append(a['timings']['select_ns']/1e6)
    ps={p['id']:p for p in a['passages']}
    for pid,ev in zip(a['selection']['ids'], a['selection']['evidence']):
        p=ps[pid]; text=doc(p['source']); sent=ev['text']
        # rows: kept spans that are table rows
        for sp in ev['spans']:
            s=p['text'][sp[0]:sp[1]]
            if not s.startswith('|') or rule.match(s.strip()) or '\n' in s: continue  # a header and its rule: a context unit
            off=p['start']+sp[0]
            h=table_header(text, off)
            if h is None or h==s.strip(): continue
            rows+=1
            at=sent.find(s)
            if at>=0 and ' '.join(h.split()) in ' '.join(sent[:at].split()): headed+=1  # spaces as sent: runs made single
        if ev['spans'] and p['start']>0:
            off=p['start']+ev['spans'][0][1]  # its end: a kept heading is its own section
            h=section(text, off+1)
            if h is not None:
                secs+=1
                if h in sent or h.lstrip('#').strip()==(ev.get('title') or '').lstrip('#').strip(): known+=1
print(f"{d}: {n} questions, {statistics.mean(toks):.0f} tokens sent; table rows sent {rows}, with their header above {headed} ({headed/max(rows,1):.3f}); "
      f"passages after a document's start whose first kept text is under a heading {secs}, with that heading sent {known} ({known/max(secs,1):.3f}); select ms median {statistics.median(sel):.0f}")
