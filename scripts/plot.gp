# Plots for scripts/report.sh (gnuplot 5.2 or later: its arrays). Called with -e setting:
#   kind   'scan' or 'memory'
#   data   the data file
#   term   'svg' or 'png'; out: the file to write
#   ttl, ylab: title and y-axis label
# scan:   data is results/scan.csv itself (rung, idle, runs, p50, p50 min,
#         p50 max, p99, server CPU per 1k round trips, ...); rungs: the
#         rungs to draw, one line each; col: the column to draw (4: p50,
#         7: p99, 8: CPU per 1k).
# memory: ns (the connection counts, one data column each after the rung),
#         rungs_mem (the rungs, one data row each).

if (term eq 'png') {
    set terminal pngcairo size 960,600 enhanced font 'sans,11'
} else {
    set terminal svg size 960,600 dynamic enhanced font 'sans,12' background '#ffffff'
}
set output out
set title ttl
set ylabel ylab
set grid ytics lc rgb '#dddddd'
set key top left box opaque
set border 3
set tics nomirror
# One colour and one point shape per rung, the same in the scan and the
# curves: several lines lie on top of each other (select and poll up to
# 1000 idle; the flat ones throughout). 08 and 09 (beyond the ladder) after
# the seven; the libuv yardstick, uv-echo, last.
array colour[10] = ['#7f7f7f', '#9467bd', '#2ca02c', '#1f77b4', '#d62728', \
                    '#ff7f0e', '#000000', '#8c564b', '#e377c2', '#17becf']
array shape[10] = [1, 2, 3, 5, 7, 9, 11, 4, 6, 13]
# (the rung's number from its second digit: gnuplot reads '08' and '09' as bad octal)
rung_index(name) = (name eq 'uv-echo') ? 10 : int(substr(name, 2, 2))

if (kind eq 'scan') {
    set xlabel 'idle connections held by the server'
    set logscale x 10
    # Idle 0 is drawn at 1: a log axis has no 0.
    set xtics ('0' 1, '10' 10, '100' 100, '1 000' 1000, '10 000' 10000)
    set xrange [0.7:15000]
    # Log y as well: flat lines stay flat, and growth shows at every decade
    # instead of only at the last point.
    set logscale y 10
    set ytics (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
    set mytics 1
    set yrange [5:*]
    n = words(rungs)
    # Each line takes its rung's rows (the others are undefined, so skipped);
    # idle 0 is drawn at 1, since a log axis has no 0.
    set datafile separator ','
    plot for [i = 1:n] data every ::1 \
        using (column(2) == 0 ? 1 : column(2)):(strcol(1) eq word(rungs, i) ? column(col) : NaN) \
        with linespoints \
        lw 2 lc rgb colour[rung_index(word(rungs, i))] pt shape[rung_index(word(rungs, i))] \
        ps 1.2 title word(rungs, i)
}

if (kind eq 'memory') {
    set style data histogram
    set style histogram cluster gap 1
    set style fill solid 0.85 border -1
    set boxwidth 0.9
    set yrange [0:*]
    set xlabel 'server'
    set xrange [-0.6:words(rungs_mem) - 0.4]
    set key top right
    m = words(ns)
    thousands(n) = n >= 1000 ? sprintf('%d %03d', int(n) / 1000, int(n) % 1000) \
                             : sprintf('%d', int(n))
    # A bar's label: two decimals below 1 KiB, one above.
    bar_label(v) = sprintf(v < 1 ? '%.2f' : '%.1f', v)
    plot for [j = 1:m] data using (column(j + 1)):xtic(1) title 'N = '.thousands(word(ns, j) + 0), \
         for [j = 1:m] data \
             using ($0 - 0.45 + 0.9 * (j - 0.5) / m):(column(j + 1)):(bar_label(column(j + 1))) \
             with labels offset 0,0.7 font ',10' notitle
}

# curve:  data is results/curves.csv (rung, n, rate_offered, runs, rate_achieved, ...);
#         rungs: the rungs to draw; nsel: the connection count to draw (04-select
#         at its own); xcol, col: the columns for x and y (offered rate and p90;
#         achieved rate and CPU per message).
if (kind eq 'curve') {
    set xlabel xlab
    set logscale x 2
    set logscale y 10
    set mytics 1
    set xtics ('500' 500, '1 000' 1000, '2 000' 2000, '4 000' 4000, '8 000' 8000, \
               '16 000' 16000, '32 000' 32000, '64 000' 64000, '128 000' 128000)
    # The latency objective behind each capacity (scripts/lib/report.awk), when given.
    if (exists('objective') && objective > 0) {
        set arrow from graph 0, first objective to graph 1, first objective \
            nohead dt 2 lc rgb '#888888'
        set label 'capacity objective (p90)' at graph 0.01, first objective * 1.25 tc rgb '#666666'
    }
    n = words(rungs)
    set datafile separator ','
    # Each rung's rows at its N (04-select is swept below FD_SETSIZE); an
    # empty cell (a figure loadgen could not read) is skipped.
    wanted(r) = strcol(1) eq r && (column(2) == nsel + 0 || (r eq '04-select'))
    plot for [i = 1:n] data every ::1 \
        using (column(xcol)):(wanted(word(rungs, i)) && strcol(col) ne '' ? column(col) : NaN) \
        with linespoints lw 2 lc rgb colour[rung_index(word(rungs, i))] \
        pt shape[rung_index(word(rungs, i))] ps 1.2 title word(rungs, i) noenhanced
}
