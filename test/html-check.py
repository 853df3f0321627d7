#!/usr/bin/env python3
"""html-check.py - what a page, as a browser built it, shows (test 82).

  html-check.py tags DOM             element names used, sorted, one line
  html-check.py attrs DOM            attribute names used, sorted, one line
  html-check.py bars DOM CLASS       heights of the <rect class=CLASS>, in order
  html-check.py column DOM TABLE N   text of column N (0-based) of each body row
                                     of <table class=TABLE>, one JSON string a line
  html-check.py pixels PNG RRGGBB... the pixels that are not the white
                                     background, then those of each colour
                                     (within 8 a channel), on one line

DOM is what chromium --dump-dom printed: the document after parsing, so an
injected element or attribute would be in it.  The PNG reader handles what
chromium --screenshot writes (8-bit RGB or RGBA, not interlaced), with only
the standard library.
"""
import html.parser
import json
import struct
import sys
import zlib


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.rects = set(), set(), []
        self.table = None      # class of the table we are in
        self.section = None    # thead, tbody, tfoot
        self.rows = {}         # table class -> [[cell text]]
        self.cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        self.attrs.update(k for k, _ in attrs)
        if tag == 'rect':
            self.rects.append((a.get('class'), a.get('height')))
        elif tag == 'table':
            self.table = a.get('class')
        elif tag in ('thead', 'tbody', 'tfoot'):
            self.section = tag
        elif tag == 'tr' and self.section == 'tbody':
            self.rows.setdefault(self.table, []).append([])
        elif tag == 'td' and self.section == 'tbody':
            self.cell = []

    def handle_endtag(self, tag):
        if tag == 'td' and self.cell is not None:
            self.rows[self.table][-1].append(''.join(self.cell))
            self.cell = None
        elif tag in ('thead', 'tbody', 'tfoot'):
            self.section = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def dom(path):
    d = Dom()
    with open(path, encoding='utf-8') as f:
        d.feed(f.read())
    return d


def png(path):
    with open(path, 'rb') as f:
        data = f.read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat = 8, b''
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6) and interlace == 0, 'unusual PNG'
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, out, i = bytearray(stride), [], 0
    for _ in range(h):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pr) & 255
        out.append(line)
        prev = line
    for line in out:
        for x in range(0, stride, bpp):
            yield line[x], line[x + 1], line[x + 2]


def main(argv):
    cmd, path = argv[1], argv[2]
    if cmd == 'tags':
        print(','.join(sorted(dom(path).tags)))
    elif cmd == 'attrs':
        print(','.join(sorted(dom(path).attrs)))
    elif cmd == 'bars':
        print(' '.join(h for c, h in dom(path).rects if c == argv[3]))
    elif cmd == 'column':
        for row in dom(path).rows.get(argv[3], []):
            print(json.dumps(row[int(argv[4])]))
    elif cmd == 'pixels':
        want = [bytes.fromhex(c) for c in argv[3:]]
        counts = [0] * (1 + len(want))
        for p in png(path):
            if p == (255, 255, 255):
                continue
            counts[0] += 1
            for i, c in enumerate(want):
                if all(abs(p[k] - c[k]) <= 8 for k in range(3)):
                    counts[1 + i] += 1
        print(' '.join(map(str, counts)))
    else:
        sys.exit('html-check.py: unknown command ' + cmd)


main(sys.argv)
