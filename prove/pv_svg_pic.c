/* SPDX-License-Identifier: MIT */
/* pv_svg_pic.c: prove svg: the picture around the marks: style, title,
 * thread lines and labels, time scale, legend. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pv_svg.h"

static const char *const palette[NPAL] = {
	"#3a6fb0", "#e8802a", "#3d9a4a", "#9b4fa3", "#d4b020", "#2fa6a8",
	"#d0688a", "#8a6642", "#86b43c", "#5a5f9c", "#e0a890", "#7fb8e0",
};

/* ---- text ---- */

/*
 * Text s (escaped already) of class cls at baseline y, in lines of lh px
 * that fit the picture's width with characters of about cw px; breaks at
 * spaces only.  Draws it if draw_it.  Returns the baseline after it.
 */
double
svg_wrap(const struct svg *g, const char *cls, double y, double lh,
	 double cw, const char *s, int draw_it)
{
	size_t max = (size_t)(((double)g->width - 2 * MARGIN) / cw);
	size_t i, n, ch, brk, sp;

	while (*s != '\0') {
		n = strlen(s);
		brk = n;
		for (i = ch = sp = 0; i < n; i++) {
			if (s[i] == ' ')
				sp = i;
			if (((unsigned char)s[i] & 0xc0) != 0x80)
				ch++;
			if (ch > max && sp > 0) {
				brk = sp;
				break;
			}
		}
		if (draw_it)
			fprintf(g->out, "<text class=\"%s\" x=\"%.2f\" "
			    "y=\"%.2f\">%.*s</text>\n", cls, MARGIN, y, (int)brk,
			    s);
		y += lh;
		for (s += brk; *s == ' '; s++)
			continue;
	}
	return y;
}

/* ---- time scale ---- */

/* The ns between ticks of the time scale: 1, 2 or 5 times a power of 10,
 * about every 110 px. */
static uint64_t
scale_step(const struct svg *g)
{
	double want = (double)g->span * 110 / g->plot;
	static const unsigned k[3] = { 1, 2, 5 };
	uint64_t m;
	int i;

	for (m = 1; m <= UINT64_MAX / 50; m *= 10)
		for (i = 0; i < 3; i++)
			if ((double)(m * k[i]) >= want)
				return m * k[i];
	return m;
}

static void
scale(struct svg *g)
{
	static const struct {
		uint64_t	ns;
		const char	*name;
	} units[] = {
		{ 1000000000, "s" }, { 1000000, "ms" }, { 1000, "\xc2\xb5s" },
		{ 1, "ns" },
	};
	uint64_t step = scale_step(g), v;
	size_t u = 0;
	double x;

	while (u < 3 && step * 10 < units[u].ns)
		u++;
	fprintf(g->out, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" "
	    "x2=\"%.2f\" y2=\"%.2f\"/>\n", g->left, g->axis_y, g->left + g->plot,
	    g->axis_y);
	for (v = 0; v <= g->span; v += step) {
		x = svg_xpos(g, g->first + v);
		fprintf(g->out, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, g->axis_y, x, g->rows_end);
		fprintf(g->out, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, g->axis_y - 5, x, g->axis_y);
		if (v == 0)
			fprintf(g->out, "<text class=\"axis\" x=\"%.2f\" "
			    "y=\"%.2f\">0</text>\n", x, g->axis_y - 8);
		else
			fprintf(g->out, "<text class=\"axis\" x=\"%.2f\" "
			    "y=\"%.2f\">%.10g %s</text>\n", x, g->axis_y - 8,
			    (double)v / (double)units[u].ns, units[u].name);
		if (v > UINT64_MAX - step)
			break;
	}
}

/* ---- thread lines ---- */

/* The thread lines, with a band behind every other process. */
static void
rows(struct svg *g)
{
	size_t i, j, band = 0;
	const struct thr *t;

	for (i = 0; i < g->nth; i = j) {
		for (j = i + 1; j < g->nth && g->th[j].node == g->th[i].node &&
		    g->th[j].pid == g->th[i].pid; j++)
			continue;
		if (i > 0 && g->th[i].node != g->th[i - 1].node)
			fprintf(g->out, "<line class=\"node\" x1=\"0\" "
			    "y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>\n",
			    g->th[i].y - ROW_H / 2 - NODE_GAP / 2, g->width,
			    g->th[i].y - ROW_H / 2 - NODE_GAP / 2);
		if (band++ % 2 == 0)
			fprintf(g->out, "<rect class=\"band\" x=\"0\" "
			    "y=\"%.2f\" width=\"%d\" height=\"%.2f\"/>\n",
			    g->th[i].y - ROW_H / 2 - 2, g->width,
			    g->th[j - 1].y - g->th[i].y + ROW_H + 4);
	}
	for (i = 0; i < g->nth; i++) {
		t = &g->th[i];
		fprintf(g->out, "<line class=\"thr\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", g->left, t->y,
		    g->left + g->plot, t->y);
		fprintf(g->out, "<text class=\"thread\" x=\"%.2f\" y=\"%.2f\">"
		    "%s<title>node %" PRIu32 " pid %" PRIu32 " tid %" PRIu32
		    "</title></text>\n", g->left - MARGIN, t->y + 4, t->label,
		    t->node, t->pid, t->tid);
	}
	if (g->nth == 0)
		fprintf(g->out, "<text x=\"%.2f\" y=\"%.2f\">no records"
		    "</text>\n", g->left, g->rows_top + ROW_H / 2);
}

/* ---- legend ---- */

/* The legend's entries after the blocks. */
enum { L_MIXED, L_EVENT, L_LOSS, L_MSG, L_STUB, L_CTL, L_COLL, L_MORE,
	L_EXTRA };

/* Whether extra entry k of the legend is shown. */
static int
shown_extra(const struct svg *g, size_t k, size_t shown)
{
	size_t unmatched = g->msgs.nsnd + g->msgs.nrcv -
	    2 * (size_t)g->msgs.matched;

	switch (k) {
	case L_LOSS:
		return g->losses > 0;
	case L_MSG:
		return g->msgs.matched > 0;
	case L_STUB:
		return unmatched > 0;
	case L_CTL:
		return g->ncontrols > 0;
	case L_COLL:
		return g->nph > 0;
	case L_MORE:
		return shown > LEGEND_MAX;
	default:
		return 1;
	}
}

/* The colours of the blocks and the other marks, in columns. */
static double
legend(struct svg *g, int draw_it)
{
	static const char *const extra[L_EXTRA] = {
		"merged blocks of several kinds", "user event(s)",
		"events lost", "message, from send to receive",
		"message not matched", "control command",
		"collection phase (processes stopped)", "more blocks",
	};
	double colw, y0 = g->rows_end + 30, x, y;
	size_t i, k, n = 0, cols, chars = 30, shown = 0;
	char name[48], note[200];

	for (i = 0; i < g->nbk; i++)
		if (g->bk[i].used && shown++ < LEGEND_MAX &&
		    g->bk[i].name != NULL && g->bk[i].nch > chars)
			chars = g->bk[i].nch;
	colw = 28 + (double)chars * CHAR_W;
	cols = (size_t)(((double)g->width - 2 * MARGIN) / colw);
	if (cols == 0)
		cols = 1;
	if (draw_it)
		fprintf(g->out, "<text class=\"head\" x=\"%.2f\" y=\"%.2f\">"
		    "Legend</text>\n", MARGIN, y0);
	y0 += 20;
	for (k = 0; k < g->nbk + L_EXTRA; k++) {
		if (k < g->nbk ? !g->bk[k].used || n >= LEGEND_MAX :
		    !shown_extra(g, k - g->nbk, shown))
			continue;
		x = MARGIN + (double)(n % cols) * colw;
		y = y0 + (double)(n / cols) * 20;
		n++;
		if (!draw_it)
			continue;
		if (k < g->nbk) {
			snprintf(name, sizeof name, "block %" PRId64,
			    g->bk[k].bid);
			fprintf(g->out, "<rect class=\"b s c%d\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"18\" height=\"12\"/>\n"
			    "<text class=\"legend\" x=\"%.2f\" y=\"%.2f\">%s"
			    "</text>\n", g->bk[k].col, x, y - 10, x + 24, y,
			    g->bk[k].shown != NULL ? g->bk[k].shown : name);
			continue;
		}
		switch (k - g->nbk) {
		case L_MIXED:
			fprintf(g->out, "<rect class=\"m s busy\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"18\" height=\"12\"/>\n", x,
			    y - 10);
			break;
		case L_EVENT:
			fprintf(g->out, "<rect class=\"ev\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"1\" height=\"6\"/>\n"
			    "<rect class=\"ev\" x=\"%.2f\" y=\"%.2f\" "
			    "width=\"1\" height=\"6\"/>\n"
			    "<rect class=\"ev\" x=\"%.2f\" y=\"%.2f\" "
			    "width=\"5\" height=\"6\"/>\n", x + 1, y - 8,
			    x + 5, y - 8, x + 10, y - 8);
			break;
		case L_LOSS:
			fprintf(g->out, "<path class=\"loss\" d=\"M%.2f %.2f"
			    "h10l-5 9z\"/>\n", x + 4, y - 10);
			break;
		case L_MSG:
			fprintf(g->out, "<line class=\"msg key\" x1=\"%.2f\" "
			    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			    "marker-end=\"url(#arrow)\"/>\n", x, y - 10, x + 18,
			    y - 1);
			break;
		case L_STUB:
			fprintf(g->out, "<line class=\"stub key\" x1=\"%.2f\" "
			    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x + 5,
			    y - 1, x + 13, y - 9);
			break;
		case L_CTL:
			fprintf(g->out, "<line class=\"ctl key\" x1=\"%.2f\" "
			    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x + 9,
			    y - 12, x + 9, y + 2);
			break;
		case L_COLL:
			fprintf(g->out, "<rect class=\"coll\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"18\" height=\"12\"/>\n", x,
			    y - 10);
			break;
		default:
			fprintf(g->out, "<text class=\"legend\" x=\"%.2f\" "
			    "y=\"%.2f\">\xe2\x80\xa6 and %zu more blocks"
			    "</text>\n", x, y, shown - LEGEND_MAX);
			continue;
		}
		fprintf(g->out, "<text class=\"legend\" x=\"%.2f\" y=\"%.2f\">"
		    "%s</text>\n", x + 24, y, extra[k - g->nbk]);
	}
	y = y0 + (double)((n + cols - 1) / cols) * 20 + 6;
	snprintf(note, sizeof note, "Blocks narrower than %.1f px and events "
	    "closer than %.1f px are merged: the picture summarizes the trace "
	    "at this resolution. Hover over a mark for details.", MERGE_PX,
	    MERGE_PX);
	return svg_wrap(g, "note", y, 14, CHAR_W, note, draw_it);
}

/* ---- style and header ---- */

static const char style[] =
    "<style type=\"text/css\"><![CDATA[\n"
    "text{font-family:\"DejaVu Sans\",Verdana,Arial,sans-serif;"
    "font-size:11px;fill:#222}\n"
    "text.title{font-size:15px;font-weight:bold}\n"
    "text.head{font-size:12px;font-weight:bold}\n"
    "text.thread{font-family:\"DejaVu Sans Mono\",Menlo,Consolas,"
    "monospace;text-anchor:end}\n"
    "text.axis{font-size:10px;text-anchor:middle;fill:#444}\n"
    "text.note,text.info{fill:#555}\n"
    "line.axis{stroke:#444;stroke-width:1}\n"
    "line.grid{stroke:#ddd;stroke-width:0.5}\n"
    "line.thr{stroke:#999;stroke-width:0.75}\n"
    "line.node{stroke:#888;stroke-width:1;stroke-dasharray:6,4}\n"
    "rect.band{fill:#f2f4f7}\n"
    "rect.s{stroke:#000;stroke-opacity:0.4;stroke-width:0.5}\n"
    "rect.busy{fill:#9a9a9a}\n"
    "rect.ev{fill:#1a1a1a}\n"
    "path.loss{fill:#e00000;stroke:#600;stroke-width:0.5}\n"
    "line.msg{stroke:#b01818;stroke-width:1}\n"
    "line.stub{stroke:#b01818;stroke-width:1.5;"
    "stroke-dasharray:2,1.5}\n"
    "path.head{fill:#b01818}\n"
    "line.ctl{stroke:#2a7a2a;stroke-width:1;stroke-dasharray:5,3}\n"
    "rect.coll{fill:#5a6e8c;fill-opacity:0.3}\n";

/* Writes everything but the marks: the picture's start, style, title,
 * thread lines, time scale and legend. */
void
svg_header(struct svg *g)
{
	double y;
	int i;

	g->height = legend(g, 0);
	fprintf(g->out, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "version=\"1.1\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d "
	    "%.0f\">\n", g->width, g->height, g->width, g->height);
	fputs(style, g->out);
	for (i = 0; i < NPAL; i++)
		fprintf(g->out, ".c%d{fill:%s}\n", i, palette[i]);
	fprintf(g->out, "]]></style>\n");
	fprintf(g->out, "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" "
	    "refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
	    "orient=\"auto\"><path class=\"head\" d=\"M0 0L10 5L0 10z\"/>"
	    "</marker></defs>\n");
	fprintf(g->out, "<title>%s</title>\n", g->head);
	fprintf(g->out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" "
	    "fill=\"#fff\"/>\n", g->width, g->height);
	y = svg_wrap(g, "title", 22, 18, TITLE_W, g->head, 1);
	svg_wrap(g, "info", y, 14, CHAR_W, g->info, 1);
	rows(g);
	svg_phases(g);
	scale(g);
	legend(g, 1);
}
