#!/usr/bin/env python3
"""flow-records.py WHAT FILE [ARG]: figures from the lines flow-record
wrote ("start TIME KEY" / "end TIME KEY", Unix time in seconds).

  overlap FILE        the most handlers running at one instant (an end and
                      a start at the same instant do not overlap)
  window FILE SECS    the most starts within any SECS-long window
  starts FILE         how many starts
  first FILE          the first start's time
  after FILE TIME     how many starts came after TIME
  last-after FILE TIME  seconds from TIME to the last start after it (0)
  span FILE           seconds from the first start to the last
  rate FILE           starts per second from the first start to the last
  busy FILE N         the handlers' total run time over N times the span
                      from the first start to the last end (how near the
                      cap of N the drain ran)
"""
import sys


def read(path):
    starts, ends = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 2:
                continue
            (starts if parts[0] == 'start' else ends).append(float(parts[1]))
    return sorted(starts), sorted(ends)


def overlap(starts, ends):
    events = [(t, 1) for t in starts] + [(t, -1) for t in ends]
    # at one instant an end comes first
    events.sort(key=lambda e: (e[0], e[1]))
    n = most = 0
    for _, d in events:
        n += d
        most = max(most, n)
    return most


def window(starts, secs):
    most, j = 0, 0
    for i, t in enumerate(starts):
        while starts[j] <= t - secs:
            j += 1
        most = max(most, i - j + 1)
    return most


def main():
    what, path = sys.argv[1], sys.argv[2]
    starts, ends = read(path)
    if what == 'overlap':
        print(overlap(starts, ends))
    elif what == 'window':
        print(window(starts, float(sys.argv[3])))
    elif what == 'starts':
        print(len(starts))
    elif what == 'first':
        print('%.6f' % starts[0])
    elif what == 'after':
        print(sum(1 for t in starts if t > float(sys.argv[3])))
    elif what == 'last-after':
        late = [t - float(sys.argv[3]) for t in starts
                if t > float(sys.argv[3])]
        print('%.3f' % (max(late) if late else 0))
    elif what == 'span':
        print('%.3f' % (starts[-1] - starts[0]))
    elif what == 'rate':
        print('%.3f' % ((len(starts) - 1) / (starts[-1] - starts[0])))
    elif what == 'busy':
        total = sum(e - s for s, e in zip(starts, ends))
        span = max(ends) - min(starts)
        print('%.3f' % (total / (int(sys.argv[3]) * span)))
    else:
        sys.exit('unknown: ' + what)


main()
