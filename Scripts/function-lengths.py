#!/usr/bin/env python3
"""Lists Swift functions, initialisers and subscripts longer than LIMIT lines, counted from the declaration
line to its closing brace (brace counting; strings and line comments are skipped), and the longest one.

Usage: Scripts/function-lengths.py LIMIT PATH... (e.g. `Scripts/function-lengths.py 40 Sources/TrustHTTP`,
the limit the "How a request flows" article keeps for TrustHTTP). Exits 1 when any is longer."""
import re, sys, pathlib
limit = int(sys.argv[1]); roots = sys.argv[2:]
decl = re.compile(r'^\s*(?:@[\w()":, ]+\s+)*(?:(?:public|package|internal|private|fileprivate|static|final|override|mutating|nonmutating|nonisolated|convenience|required|@inlinable|@usableFromInline|@discardableResult|@inline\(never\)|@Sendable)\s+)*(func\s+[^\s(<]+|init[?!]?\s*[(<]|deinit\b|subscript\s*[(<])')
worst = []
for root in roots:
    for path in pathlib.Path(root).rglob('*.swift'):
        lines = path.read_text().split('\n')
        i = 0
        while i < len(lines):
            if decl.match(lines[i]):
                depth = 0; started = False; j = i
                while j < len(lines):
                    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', lines[j].split('//')[0])
                    for ch in code:
                        if ch == '{': depth += 1; started = True
                        elif ch == '}': depth -= 1
                    if started and depth <= 0: break
                    if not started and j > i + 8: break
                    j += 1
                if started:
                    n = j - i + 1
                    worst.append((n, f'{path}:{i+1}: {lines[i].strip()[:80]}'))
            i += 1
worst.sort(reverse=True)
for n, where in worst:
    if n > limit: print(n, where)
print("longest:", worst[0][0] if worst else 0, worst[0][1] if worst else "")
sys.exit(1 if any(n > limit for n, _ in worst) else 0)
