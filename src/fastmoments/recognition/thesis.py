"""Published numbers of chapter 6 of the :ref:`Zernike thesis <bib-zernike-thesis>` (tables
6.1-6.8), to print beside ours.

Transcribed from ``zernike-pseudozernike-gpu-thesis.txt``. The thesis uses 6,762 characters
(GB2312 has 6,763 hanzi; it does not say which one is missing).
"""

from __future__ import annotations

__all__ = ["CLOSEST", "HISTOGRAM", "MEAN_DISTANCE", "N_CHARACTERS", "SIMILAR_PAIRS",
           "SIMILAR_UNREADABLE", "VARIANCES", "VECTORS"]

N_CHARACTERS = 6762

#: Eq. 6.1-6.3: the moments of the three pseudo-Zernike feature vectors.
VECTORS = {
    "complex": [(4, 0), (5, 0), (5, 1), (5, 2)],
    "real": [(4, 0), (5, 0), (5, 1), (5, 2)],
    "magnitude": [(0, 0), (4, 0), (5, 0), (5, 2)],
}

#: Tables 6.1-6.3: variance[kind][m][n] for n <= 5 (None where m > n).
VARIANCES = {
    "complex": [[0.0035, 0.0015, 0.0020, 0.0034, 0.0054, 0.0054],
                [None, 0.0014, 0.0017, 0.0025, 0.0040, 0.0056],
                [None, None, 0.0027, 0.0026, 0.0044, 0.0062],
                [None, None, None, 0.0026, 0.0032, 0.0048],
                [None, None, None, None, 0.0031, 0.0042],
                [None, None, None, None, None, 0.0040]],
    "real": [[0.0035, 0.0015, 0.0020, 0.0034, 0.0054, 0.0054],
             [None, 0.0008, 0.0009, 0.0016, 0.0025, 0.0038],
             [None, None, 0.0021, 0.0017, 0.0031, 0.0048],
             [None, None, None, 0.0012, 0.0018, 0.0025],
             [None, None, None, None, 0.0019, 0.0027],
             [None, None, None, None, None, 0.0019]],
    "magnitude": [[0.0035, 0.0013, 0.0013, 0.0015, 0.0023, 0.0029],
                  [None, 0.0004, 0.0004, 0.0007, 0.0010, 0.0015],
                  [None, None, 0.0007, 0.0008, 0.0011, 0.0019],
                  [None, None, None, 0.0006, 0.0007, 0.0012],
                  [None, None, None, None, 0.0017, 0.0017],
                  [None, None, None, None, None, 0.0010]],
}

#: Table 6.4: pairs per distance bin (0-0.01, ..., 0.09-0.10, above 0.10).
HISTOGRAM = {
    "V_complex": [2, 160, 1458, 6656, 20698, 49165, 99181, 175069, 274844, 401117, 21830531],
    "V_real": [382, 5618, 23291, 60438, 119687, 202445, 308695, 420358, 566927, 707207,
               20433893],
    "V_magnitude": [1866, 26502, 103019, 244556, 443697, 680139, 933184, 1172664, 1384329,
                    1544734, 16324251],
    "V_complex (Zernike)": [1, 103, 1431, 9356, 34357, 93979, 204098, 376078, 602301, 869781,
                            20667456],
}
MEAN_DISTANCE = {"V_complex": 0.2018, "V_real": 0.1841, "V_magnitude": 0.1350,
                 "V_complex (Zernike)": 0.1633}

#: Tables 6.5-6.7: the ten closest pairs of each vector.
CLOSEST = {
    "V_complex": [("差露", 0.0067), ("碍疆", 0.0095), ("嗜溲", 0.0101), ("亮拿", 0.0102),
                  ("片移", 0.0114), ("恰愉", 0.0114), ("痕吉", 0.0115), ("朱恸", 0.0116),
                  ("工十", 0.0118), ("歌鹰", 0.0120)],
    "V_real": [("奸妊", 0.0019), ("钙脉", 0.0034), ("钡稼", 0.0036), ("缝钛", 0.0036),
               ("窘焘", 0.0039), ("它阕", 0.0042), ("舛睨", 0.0042), ("亮拿", 0.0043),
               ("潭毫", 0.0043), ("靖平", 0.0044)],
    "V_magnitude": [("隧剃", 0.0011), ("掂惹", 0.0015), ("弹策", 0.0018), ("绰肴", 0.0018),
                    ("炯茴", 0.0019), ("财净", 0.0020), ("洁浴", 0.0020), ("邳麽", 0.0023),
                    ("栽颀", 0.0024), ("呱觐", 0.0026)],
}

#: Table 6.8: (pair as we read it, thesis's pair text, complex, real, magnitude distance).
#: Four pairs of the text show the same character twice (an artefact of the text we have);
#: for them we use the confusable partner we believe was meant, marked by ``reading=True``.
SIMILAR_PAIRS = [
    ("抄钞", "抄钞", 0.0644, 0.0570, 0.0341, False),
    ("芳坊", "芳坊", 0.1714, 0.1476, 0.0913, False),
    ("羸赢", "羸羸", 0.1747, 0.1715, 0.1362, True),
    ("日曰", "日曰", 0.1545, 0.1542, 0.1320, False),
    ("荻获", "荻荻", 0.0857, 0.0772, 0.0627, True),
    ("朴扑", "朴扑", 0.1495, 0.1419, 0.0890, False),
    ("末木", "末木", 0.1322, 0.1135, 0.1128, False),
    ("己巳", "己巳", 0.1348, 0.1166, 0.1116, False),
    ("主柱", "主柱", 0.1598, 0.1480, 0.1348, False),
    ("诅阻", "诅阻", 0.2806, 0.2782, 0.1443, False),
    ("末未", "末末", 0.0598, 0.0596, 0.0464, True),
    ("夭天", "夭夭", 0.0963, 0.0837, 0.0780, True),
    ("奖浆", "奖浆", 0.0701, 0.0687, 0.0526, False),
    ("垃拉", "垃拉", 0.0851, 0.0714, 0.0284, False),
    ("伦抡", "伦抡", 0.0586, 0.0396, 0.0483, False),
    ("沦论", "沦论", 0.0950, 0.0918, 0.0734, False),
    ("大犬", "大犬", 0.0817, 0.0726, 0.0386, False),
    ("搏博", "搏博", 0.1589, 0.1560, 0.0614, False),
    ("俊浚", "俊浚", 0.1423, 0.1414, 0.1199, False),
    ("毫豪", "毫豪", 0.1099, 0.1082, 0.0922, False),
    ("竟竞", "竟竞", 0.1275, 0.1255, 0.0727, False),
    ("辩辨", "辩辨", 0.1388, 0.1385, 0.1134, False),
]

#: Table 6.8 pairs we cannot reproduce: a character outside GB2312, or the same character twice
#: with no partner we can tell.
SIMILAR_UNREADABLE = {
    "换饒": "饒 is a traditional character, not in GB2312",
    "鞞鞞": "the same character twice in our copy of the text, and 鞞 is not in GB2312",
    "壕壕": "the same character twice in our copy of the text; the partner is not clear",
}
