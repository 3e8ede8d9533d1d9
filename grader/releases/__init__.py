"""What `softlookup release` makes from solutions/: notebooks, an nbgrader course, a student bundle, a Gradescope zip."""
