"""Shared by the checkers' self-tests: compares the faults a checker found in a made-up tree with the known ones."""


def report(found, expected, noun, matches=lambda found, expected: found == expected):
    """Prints each known fault not found and each finding that is no known fault, then a count line; returns the
    exit status (1 on any miss or extra). `matches(found, expected)` says whether a finding is that fault."""
    missed = [e for e in expected if not any(matches(f, e) for f in found)]
    extra = [f for f in found if not any(matches(f, e) for e in expected)]
    for m in missed:
        print(f"not found: {m}")
    for e in extra:
        print(f"found but not a {noun}: {e}")
    print(f"self-test: {len(expected) - len(missed)} of {len(expected)} {noun}s found, {len(extra)} extra")
    return 1 if missed or extra else 0
