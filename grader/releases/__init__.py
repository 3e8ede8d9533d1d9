"""What `softlookup release` makes from solutions/: notebooks, an nbgrader course, a student bundle, a Gradescope zip."""

import sys

# nbformat checks notebooks with jsonschema, which imports rfc3987_syntax where it is installed (jupyterlab's
# dependencies install it), and that builds a grammar as it is imported: 0.85 s of every command that reads or
# writes a notebook (a class's similarity pass, a release), for the "iri" formats that no notebook schema names
# (python-jsonschema/jsonschema#1428). Marked absent before nbformat is first imported, it leaves them unchecked.
sys.modules.setdefault("rfc3987_syntax", None)
