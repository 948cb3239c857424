"""The shareable incident report: an archive judged once, drawn as one self-contained HTML file.

``judged`` plays the archive through the same Judge as ``check --from`` and ``replay``;
``series`` turns the frames and the per-tick commit budget into chart series on one time axis;
``page`` writes the HTML with the vendored uPlot, the data and the findings inline, so the file
opens anywhere with no network access.
"""
